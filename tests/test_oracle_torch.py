"""The oracle on PyTorch code: torchsort's soft sort and rank, and a Heun ResNet differentiated by torch.autograd
(skipped where torch or torchsort is not installed; both are in the `oracle` extra)."""

from pathlib import Path

import numpy as np
import pytest

from theory import oracle

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
TORCH_ADAPTER = ROOT / "examples" / "oracle" / "torch_tensors.py"
TORCHSORT_ADAPTER = ROOT / "examples" / "oracle" / "torchsort_soft.py"
EPS = float(np.finfo(np.float64).eps)


def _torch_resnet():
    import importlib.util

    spec = importlib.util.spec_from_file_location("torch_resnet", ROOT / "examples" / "oracle" / "torch_resnet.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _p2_cases(kernel, regime=None):
    return [c.name for c in oracle.kernel(kernel).cases()
            if c.inputs["p"] == 2.0 and (regime is None or c.params.get("regime") == regime)]


def test_torchsort_soft_rank_passes_every_p2_case_float64_and_float32():
    torchsort = pytest.importorskip("torchsort")
    for dtype in ("float64", "float32"):
        result = oracle.verify("soft_rank", torchsort.soft_rank, adapter=TORCHSORT_ADAPTER,
                               cases=_p2_cases("soft_rank"), dtype=dtype)
        assert result.ok, result.report()


def test_torchsort_soft_sort_passes_except_hard_regime_where_it_cancels():
    """torchsort's soft sort agrees with the reference (convention: its "l2" strength is our reg, increasing
    order) everywhere but in the hard regime (reg = 1e-3), where it returns w - v with w = rho/reg of size n/reg
    and v = isotonic(w - sort(x)): the subtraction loses about eps n/reg, far above what the problem's
    conditioning allows (its Jacobian is a permutation there, ||J|| = 1). The error follows eps n/reg: 100 times
    smaller reg, about 100 times larger error, while the reference stays at rounding level."""
    torchsort = pytest.importorskip("torchsort")
    soft = [c for c in _p2_cases("soft_sort") if not c.startswith("hard_")]
    result = oracle.verify("soft_sort", torchsort.soft_sort, adapter=TORCHSORT_ADAPTER, cases=soft)
    assert result.ok, result.report()
    hard = _p2_cases("soft_sort", regime="hard")
    result = oracle.verify("soft_sort", torchsort.soft_sort, adapter=TORCHSORT_ADAPTER, cases=hard)
    assert result.exit_code == 1 and {r.case for r in result.failures} == set(hard)
    cases = {c.name: c for c in oracle.kernel("soft_sort").cases()}
    for row in result.rows:
        n, reg = cases[row.case].inputs["x"].size, cases[row.case].inputs["reg"]
        assert row.tol < row.max_abs <= EPS * n / reg, (row.case, row.max_abs, row.tol)
    # the error law eps n / reg, measured on the n = 100 input
    import theory.topk as T

    x = cases["hard_p2_n100_asc"].inputs["x"]
    errors = []
    for reg in (1e-3, 1e-5):
        got = torchsort.soft_sort(torch.from_numpy(x)[None], regularization="l2", regularization_strength=reg)[0]
        errors.append(float(np.max(np.abs(got.numpy() - T.soft_sort(x, reg=reg, descending=False)))))
    assert 10.0 < errors[1] / errors[0] < 1000.0, errors
    assert errors[1] <= EPS * x.size / 1e-5


def test_torchsort_adapter_refuses_p_other_than_2():
    torchsort = pytest.importorskip("torchsort")
    result = oracle.verify("soft_sort", torchsort.soft_sort, adapter=TORCHSORT_ADAPTER, cases=["partial_p4_3_n5_asc"])
    assert result.exit_code == 2 and "p = 2" in result.report()


def test_torch_autograd_heun_resnet_passes_gradient_and_forward_vectors():
    """The example network (examples/oracle/torch_resnet.py, the step h an argument) passes every case of the four
    resnet kernels, the step rules 1/(N+1) and 1 included: an independent check of the identities by which the
    reference computes another step from the package's 1/N (theory/oracle/_kernels/resnet.py, _scales)."""
    net = _torch_resnet()
    for kernel, fn in (("resnet_gradient", net.gradient), ("resnet_forward", net.forward),
                       ("resnet_reverse", net.reverse), ("resnet_gradient_adjoint", net.adjoint_gradient)):
        result = oracle.verify(kernel, fn, adapter=TORCH_ADAPTER)
        assert result.ok and all(r.verdict == "pass" for r in result.rows), result.report()
        assert any(r.case.startswith("heun_") for r in result.rows)
        assert any(r.case.endswith("_step_1_over_Nplus1") for r in result.rows)
        assert any(r.case.endswith("_step_1") for r in result.rows)


def test_torch_resnet_in_float32_passes_float32_mode_and_fails_float64_mode():
    """The documented float32 mode: a network computed in float32 passes the float32 rule and fails float64's."""
    net = _torch_resnet()
    result32 = oracle.verify("resnet_gradient", net.gradient, adapter=TORCH_ADAPTER, dtype="float32")
    assert result32.ok, result32.report()

    def in_float32(x0, theta, y, residual, scheme, step):
        g = net.gradient(x0.float(), theta.float(), y.float(), residual, scheme, step)
        return tuple(t.double() for t in g)

    result = oracle.verify("resnet_gradient", in_float32, adapter=TORCH_ADAPTER)
    assert result.exit_code == 1
    assert len(result.failures) >= len(result.rows) // 2, result.report()


def test_torch_heun_computed_as_euler_fails_on_heun_cases():
    """Planted: the Heun network differentiated as an Euler network (last slice unused, its gradient 0)."""
    net = _torch_resnet()

    def heun_as_euler(x0, theta, y, residual, scheme, step):
        if scheme != "heun":
            return net.gradient(x0, theta, y, residual, scheme, step)
        g_theta, g_x0 = net.gradient(x0, theta[:-1], y, residual, "euler", step)
        return torch.cat([g_theta, torch.zeros_like(theta[-1:])]), g_x0

    result = oracle.verify("resnet_gradient", heun_as_euler, adapter=TORCH_ADAPTER)
    assert result.exit_code == 1
    assert {r.case for r in result.failures} == {c.name for c in oracle.kernel("resnet_gradient").cases()
                                                  if c.inputs["scheme"] == "heun"}
    assert "first failing case: heun_" in result.report()


def _torch_momentum_gradient(x0, v0, theta, residual, gamma, y, factor=True):
    """A Momentum ResNet (Eq. (4.2) of Sander's thesis, ch. 4) in torch, its gradient by autograd."""
    net = _torch_resnet()
    x0, v0, theta = (t.detach().requires_grad_(True) for t in (x0, v0, theta))
    x, v = x0, v0
    for n in range(theta.shape[0]):
        v = gamma * v + ((1 - gamma) if factor else 1.0) * net._f(residual, x, theta[n])
        x = x + v
    loss = 0.5 * torch.sum((x - y) ** 2)
    return (loss,) + torch.autograd.grad(loss, (theta, x0, v0))


def test_torch_autograd_momentum_resnet_passes_gradient_vectors_float64_and_float32():
    for dtype in ("float64", "float32"):
        result = oracle.verify("momentum_gradient", _torch_momentum_gradient, adapter=TORCH_ADAPTER, dtype=dtype)
        assert result.ok, result.report()

    def without_1_minus_gamma(x0, v0, theta, residual, gamma, y):  # planted
        return _torch_momentum_gradient(x0, v0, theta, residual, gamma, y, factor=False)

    result = oracle.verify("momentum_gradient", without_1_minus_gamma, adapter=TORCH_ADAPTER)
    assert result.exit_code == 1
    assert {r.case for r in result.rows if r.verdict == "pass"} == {
        c.name for c in oracle.kernel("momentum_gradient").cases() if c.inputs["gamma"] == 0.0}


def _torch_scaling():
    import importlib.util

    spec = importlib.util.spec_from_file_location("torch_scaling", ROOT / "examples" / "oracle" / "torch_scaling.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_torch_scaled_resnet_passes_and_pytorchs_default_slope_fails_the_other_slopes():
    """examples/oracle/torch_scaling.py passes scaling_forward in float64 and float32 mode; left at PyTorch's
    negative_slope = 0.01 it fails exactly the leaky cases at another slope; with transposed weights (x @ W in
    place of torch.nn.functional.linear's x @ W.T) it fails wherever a matrix acts and matters."""
    net = _torch_scaling()
    for dtype in ("float64", "float32"):
        result = oracle.verify("scaling_forward", net.forward, adapter=TORCH_ADAPTER, dtype=dtype)
        assert result.ok, result.report()
    default = oracle.verify("scaling_forward", lambda **kw: net.forward(**kw, negative_slope=0.01),
                            adapter=TORCH_ADAPTER)
    assert {r.case for r in default.failures} == {
        c.name for c in oracle.kernel("scaling_forward").cases()
        if c.inputs["activation"] == "leaky_relu" and c.inputs["slope"] != 0.01}
    transposed = oracle.verify("scaling_forward", lambda V, W, **kw: net.forward(
        V=V.transpose(1, 2), W=W.transpose(1, 2) if W.ndim == 3 else W, **kw), adapter=TORCH_ADAPTER)
    assert transposed.exit_code == 1 and len(transposed.failures) >= len(transposed.rows) // 2


def _torch_attention(X, WQ, WK, WV, kind, marginals, scale=1.0):
    """Single-head softmax attention with torch.nn.functional.scaled_dot_product_attention (no mask, no dropout)."""
    import torch.nn.functional as F

    if kind != "softmax":
        raise ValueError("this function computes the SoftMax attention only")
    q, k, v = F.linear(X, WQ), F.linear(X, WK), F.linear(X, WV)
    return F.scaled_dot_product_attention(q[None], k[None], v[None], scale=scale)[0]


def test_torch_scaled_dot_product_attention_needs_scale_one():
    """PyTorch's attention divides the logits by sqrt(m): with scale=1.0 it passes every SoftMax case of
    sinkhorn_attention (float64 and float32), with its default scale it fails all but the single token."""
    softmax = [c.name for c in oracle.kernel("sinkhorn_attention").cases() if c.inputs["kind"] == "softmax"]
    for dtype in ("float64", "float32"):
        result = oracle.verify("sinkhorn_attention", _torch_attention, adapter=TORCH_ADAPTER, cases=softmax,
                               dtype=dtype)
        assert result.ok, result.report()
    default = oracle.verify("sinkhorn_attention", lambda **kw: _torch_attention(**kw, scale=None),
                            adapter=TORCH_ADAPTER, cases=softmax)
    # one token, or seven copies of one token, have a single distinct key: any scale gives the same average
    assert {r.case for r in default.failures} == set(softmax) - {"softmax_n1", "softmax_identical_tokens_n7"}


def test_torch_mse_loss_momentum_gradient_maps_by_d_over_2():
    """torch.nn.MSELoss() (the mean over the d coordinates, no 1/2): its loss and gradients times d/2 pass
    momentum_gradient; unmapped they fail wherever d != 2."""
    net = _torch_resnet()

    def mse(x0, v0, theta, residual, gamma, y):
        x0, v0, theta = (t.detach().requires_grad_(True) for t in (x0, v0, theta))
        x, v = x0, v0
        for n in range(theta.shape[0]):
            v = gamma * v + (1 - gamma) * net._f(residual, x, theta[n])
            x = x + v
        loss = torch.nn.MSELoss()(x, y)
        return (loss,) + torch.autograd.grad(loss, (theta, x0, v0))

    def times_d_over_2(fn):
        call = oracle.load_adapter(TORCH_ADAPTER)(fn)
        return lambda **kw: tuple(t * (kw["x0"].shape[0] / 2) for t in call(**kw))

    assert oracle.verify("momentum_gradient", mse, adapter=times_d_over_2).ok
    unmapped = oracle.verify("momentum_gradient", mse, adapter=TORCH_ADAPTER)
    assert {r.case for r in unmapped.failures} == {
        c.name for c in oracle.kernel("momentum_gradient").cases() if c.inputs["x0"].shape[0] != 2}


# ---------------------------------------------------------------------------------------------- attention variants

def _mha(X, WQ, WK, WV, mask, kind, n_iter, scale_queries=True):
    """torch.nn.MultiheadAttention put in attention_heads' conventions (the mappings `theory oracle show
    attention_heads` states): in_proj rows from WQ[k].T per head, the query rows times sqrt(d_h) (it divides),
    no biases, out_proj the identity, batch_first, and attn_mask = ~mask (its True is 'masked') repeated per head."""
    h, d, d_h = WQ.shape
    B = X.shape[0]
    E = h * d_h
    if E != d:
        raise ValueError("nn.MultiheadAttention needs h d_h = d")
    net = torch.nn.MultiheadAttention(E, h, bias=False, batch_first=True, dtype=X.dtype)
    stack = lambda W: W.permute(0, 2, 1).reshape(E, d)  # noqa: E731 - head k: rows k d_h:(k + 1) d_h
    with torch.no_grad():
        q = stack(WQ) * (d_h ** 0.5 if scale_queries else 1.0)
        net.in_proj_weight.copy_(torch.cat([q, stack(WK), stack(WV)]))
        net.out_proj.weight.copy_(torch.eye(E, dtype=X.dtype))
        m = mask if mask.dim() == 3 else mask.expand(B, *mask.shape)
        out, _ = net(X, X, X, attn_mask=(~m).repeat_interleave(h, 0), need_weights=False)
    return out


def _mha_cases():
    return [c.name for c in oracle.kernel("attention_heads").cases()
            if c.inputs["kind"] == "softmax" and c.inputs["WQ"].shape[0] * c.inputs["WQ"].shape[2] == c.inputs["X"].shape[2]]


def test_torch_multihead_attention_passes_attention_heads_with_the_mappings():
    """nn.MultiheadAttention mapped as `show` says passes every SoftMax case with h d_h = d (masks included) in
    float64 and float32 mode; without the sqrt(d_h) on the queries it fails each of them with d_h > 1, n > 1."""
    names = _mha_cases()
    assert any("causal" in n for n in names) and any("padding" in n for n in names)
    for dtype in ("float64", "float32"):
        result = oracle.verify("attention_heads", _mha, adapter=TORCH_ADAPTER, cases=names, dtype=dtype)
        assert result.ok and not result.failures, result.report()
    unscaled = oracle.verify("attention_heads", lambda **kw: _mha(**kw, scale_queries=False), adapter=TORCH_ADAPTER,
                             cases=names)
    cases = {c.name: c for c in oracle.kernel("attention_heads").cases()}
    assert {r.case for r in unscaled.failures} == {
        n for n in names if cases[n].inputs["WQ"].shape[2] > 1 and cases[n].inputs["X"].shape[1] > 1}


def _torch_resnet_any():
    """The example network with its residual function extended to 'bias' (f = theta) and 'mlp' (V tanh(W x + b),
    theta_n = (V.ravel(), W.ravel(), b)); the rest of examples/oracle/torch_resnet.py unchanged."""
    net = _torch_resnet()
    matrix = net._f

    def f(residual, x, th):
        if residual == "bias":
            return th
        if residual == "mlp":
            d = x.shape[-1]
            m = th.shape[-1] // (2 * d + 1)
            V, W, b = th[: d * m].reshape(d, m), th[d * m: 2 * d * m].reshape(m, d), th[2 * d * m:]
            return V @ torch.tanh(W @ x + b)
        return matrix(residual, x, th)

    net._f = f
    return net


def test_torch_autograd_resnet_passes_the_bias_and_mlp_cases():
    """torch.autograd through the extended network passes every bias and mlp case of the four resnet kernels in
    float64 (each step rule), and resnet_gradient's in float32 mode."""
    net = _torch_resnet_any()
    for kernel, fn in (("resnet_gradient", net.gradient), ("resnet_forward", net.forward),
                       ("resnet_reverse", net.reverse), ("resnet_gradient_adjoint", net.adjoint_gradient)):
        names = [c.name for c in oracle.kernel(kernel).cases() if c.inputs["residual"] in ("bias", "mlp")
                 and c.params["N"] <= 100]
        result = oracle.verify(kernel, fn, adapter=TORCH_ADAPTER, cases=names)
        assert result.ok and not result.failures, result.report()
        assert any(r.case.endswith("_step_1") for r in result.rows)
    names = [c.name for c in oracle.kernel("resnet_gradient").cases() if c.inputs["residual"] in ("bias", "mlp")]
    result32 = oracle.verify("resnet_gradient", net.gradient, adapter=TORCH_ADAPTER, cases=names, dtype="float32")
    assert result32.ok and not result32.failures, result32.report()


# ------------------------------------------------------------------ the Heaviside limit and the exact Momentum ResNet

def _torch_heaviside_loss(u, v, f):
    """The Heaviside reduced loss in PyTorch, on tensors of the oracle's dtype: per cell the variance of f*."""
    cuts = torch.unique(torch.cat([torch.zeros(1, dtype=f.dtype), torch.clamp(u, 0.0, 1.0),
                                   torch.ones(1, dtype=f.dtype)]))
    edges = torch.cat([torch.zeros(1, dtype=f.dtype), v, torch.ones(1, dtype=f.dtype)])
    lo, hi = cuts[:-1, None], cuts[1:, None]
    w = torch.clamp(edges[None, 1:], lo, hi) - torch.clamp(edges[None, :-1], lo, hi)
    mean = (w @ f) / (hi[:, 0] - lo[:, 0])
    return 0.5 * torch.sum(w * (f[None, :] - mean[:, None]) ** 2)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_torch_heaviside_loss_passes(dtype):
    result = oracle.verify("heaviside_loss", _torch_heaviside_loss, adapter=TORCH_ADAPTER, dtype=dtype)
    assert result.ok, result.report()


def test_torch_exact_round_trip_with_int64_tensors():
    """The exact Momentum ResNet with torch.int64 tensors: exact while the buffer fits 63 bits, and the round trip
    passes every case in which it does (the buffer of 5000 layers at gamma = 99/100 does not: those raise)."""
    def trip(x0, v0, theta, residual, num, den, frac_bits):
        scale = 2.0 ** frac_bits
        X, V = torch.round(x0 * scale).to(torch.int64), torch.round(v0 * scale).to(torch.int64)
        B = torch.zeros_like(X)
        act = torch.tanh if residual == "tanh" else (lambda z: z)
        c = 1.0 - num / den

        def res(Xn, n):
            return torch.round(c * act(theta[n] @ (Xn.to(torch.float64) / scale)) * scale).to(torch.int64)

        limit = 2 ** 62 // den
        for n in range(theta.shape[0]):
            if bool((B >= limit).any()):
                raise OverflowError("the buffer passed 63 bits")
            b = B * den + torch.remainder(V, den)
            V, B = torch.div(V, den, rounding_mode="floor") * num + torch.remainder(b, num), \
                torch.div(b, num, rounding_mode="floor")
            V = V + res(X, n)
            X = X + V
        for n in range(theta.shape[0] - 1, -1, -1):
            X = X - V
            V = V - res(X, n)
            b = B * num + torch.remainder(V, num)
            V, B = torch.div(V, num, rounding_mode="floor") * den + torch.remainder(b, den), \
                torch.div(b, den, rounding_mode="floor")
        return X, V, B

    result = oracle.verify("momentum_exact_roundtrip", trip, adapter=TORCH_ADAPTER)
    errors = {r.case for r in result.rows if r.verdict == "ERROR"}
    assert errors == {"gamma99_100_N5000", "gamma99_100_N5000_tanh", "gamma1_10_N40", "gamma1_10_N40_tanh"}, \
        result.report()
    assert result.count("FAIL") == 0 and result.count("pass") == len(result.rows) - len(errors)


def _torch_resnet_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("torch_resnet_module",
                                                  ROOT / "examples" / "oracle" / "torch_resnet_module.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module_cases():
    """The resnet_forward cases of the residual functions the class-based example implements."""
    return [c.name for c in oracle.kernel("resnet_forward").cases()
            if c.inputs["residual"] in ("linear", "tanh", "tanh_out")]


def test_class_based_torch_resnet_passes_through_hooks_and_in_last_state_mode():
    """examples/oracle/torch_resnet_module.py: an nn.Module with an nn.ModuleList of blocks whose forward returns
    x_N only passes resnet_forward with every state read by record_states' hooks, and with outputs="last"; its
    last state in the default mode is an ERROR naming the option; a step off by 1e-6 fails in both modes."""
    net = _torch_resnet_module()
    every = _module_cases()
    cases = [c for c in every if not c.endswith("_N10000")]  # the 10^4 modules of a deep case take seconds to build
    result = oracle.verify("resnet_forward", net.trajectory, adapter=TORCH_ADAPTER, cases=every)
    assert result.ok, result.report()
    result = oracle.verify("resnet_forward", net.trajectory, adapter=TORCH_ADAPTER, cases=cases, dtype="float32")
    assert result.ok, result.report()
    for dtype in ("float64", "float32"):
        last = oracle.verify("resnet_forward", net.last_state, adapter=TORCH_ADAPTER, cases=cases, outputs="last",
                             dtype=dtype)
        assert last.ok, last.report()
    unmapped = oracle.verify("resnet_forward", net.last_state, adapter=TORCH_ADAPTER, cases=cases[:2])
    assert unmapped.exit_code == 2 and "outputs='last'" in unmapped.rows[0].message

    def off(fn):
        return lambda step, **kw: fn(step=step * (1 + 1e-6), **kw)

    for fn, mode in ((net.trajectory, "all"), (net.last_state, "last")):
        bad = oracle.verify("resnet_forward", off(fn), adapter=TORCH_ADAPTER, cases=cases, outputs=mode)
        assert bad.exit_code == 1 and bad.count("FAIL") >= len(cases) // 2, bad.report()

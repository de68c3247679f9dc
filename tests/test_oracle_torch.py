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

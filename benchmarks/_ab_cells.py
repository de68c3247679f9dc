"""The cells of ``bench_ab.py``: representative calls of every kernel family through public names only, timed in
the tree that ``PYTHONPATH`` points at (one process per tree and round). Prints one JSON line: the minimum time of
each cell in seconds (null where that tree lacks the call)."""
import json, sys, time, gc
import numpy as np

def tmin(f, rounds):
    f(); best = np.inf
    for _ in range(rounds):
        gc.disable(); a = time.perf_counter(); f(); b = time.perf_counter(); gc.enable()
        best = min(best, b - a)
    return best

rng = np.random.default_rng(0)
cells = {}
import theory.resnet as R
x0 = rng.standard_normal(16); th = rng.standard_normal((10000, 16, 16)) / 16
xb = rng.standard_normal((64, 16)); thb = rng.standard_normal((10000, 16, 16)) / 16
y = rng.standard_normal(16)
cells["resnet fwd euler d16 N1e4"] = (lambda: R.forward(x0, th, "tanh"), 60)
cells["resnet fwd heun d16 N1e4"] = (lambda: R.forward(x0, th, "tanh", "heun"), 30)
cells["resnet fwd euler d16 B64 N1e4"] = (lambda: R.forward(xb, thb, "tanh"), 10)
cells["resnet grad backprop d16 N1e4"] = (lambda: R.gradient(x0, th, y, "tanh"), 30)
cells["resnet grad adjoint d16 N1e4"] = (lambda: R.gradient(x0, th, y, "tanh", method="adjoint"), 20)
# small states, where a layer costs little more than a call: the per-layer call of the residual function shows here
x2 = rng.standard_normal(2); th2 = rng.standard_normal((10000, 2, 2)) / 2; y2 = rng.standard_normal(2)
mlp8 = R.mlp(8); thp = rng.standard_normal((10000,) + mlp8.param_shape(2)) / 4
cells["resnet fwd heun d2 N1e4"] = (lambda: R.forward(x2, th2, "tanh", "heun"), 60)
cells["resnet fwd euler mlp8 d2 N1e4"] = (lambda: R.forward(x2, thp, mlp8), 60)
cells["resnet grad heun d2 N1e4"] = (lambda: R.gradient(x2, th2, y2, "tanh", "heun"), 30)
import theory.momentum as M
def mom2():
    g2 = 1 - 1 / (50 * 10000); xs, vs = M.forward(x2, None, th2, "tanh", g2); M.inverse(xs[-1], vs[-1], th2, "tanh", g2)
cells["momentum fwd+inv d2 N1e4"] = (mom2, 60)
thm = rng.standard_normal((2000, 64, 64)) / 8; xm = rng.standard_normal(64); g = 1 - 1 / (50 * 2000)
def mom():
    xs, vs = M.forward(xm, None, thm, "tanh", g); M.inverse(xs[-1], vs[-1], thm, "tanh", g)
cells["momentum fwd+inv d64 N2000"] = (mom, 15)
import theory.implicit as I
p0 = I.initialize(16, 16, 256, np.random.default_rng(1), q=16, d_out=16, kind="iid")
X, Y = I.synthetic_data(32, 16, np.random.default_rng(2), d_out=16)
cells["implicit loss+grad L256"] = (lambda: I.loss_and_gradient(X, Y, p0, "tanh"), 30)
import theory.topk as T
x4 = rng.standard_normal(10000); x6 = rng.standard_normal(1_000_000); Xb = rng.standard_normal((256, 1000))
cells["soft_sort 1e4"] = (lambda: T.soft_sort(x4), 200)
cells["soft_rank 1e4"] = (lambda: T.soft_rank(x4), 200)
cells["soft_sort 1e6"] = (lambda: T.soft_sort(x6), 8)
cells["soft_rank 1e6"] = (lambda: T.soft_rank(x6), 8)
cells["soft_sort p=1.5 1e4"] = (lambda: T.soft_sort(x4, 1.0, 1.5), 20)
cells["soft_rank batch 256x1000"] = (lambda: T.soft_rank(Xb), 40)
cells["topk_mask k=10 1e4"] = (lambda: T.topk_mask(x4, 10), 100)
cells["topk_mask p=1.5 k=10 1e4"] = (lambda: T.topk_mask(x4, 10, 1.0, 1.5), 30)
cells["topk_magnitude k=10 1e4"] = (lambda: T.topk_magnitude(x4, 10), 100)
import theory.isotonic as ISO
yi = np.cumsum(rng.standard_normal(1_000_000))
cells["isotonic 1e6"] = (lambda: ISO.isotonic_regression(yi), 10)
cells["isotonic p=3 1e4"] = (lambda: ISO.isotonic_regression(yi[:10000], p=3.0), 10)
import theory.fbm as F
cells["fgn n=4096 H=0.7"] = (lambda: F.fgn(4096, 0.7, rng=np.random.default_rng(0)), 100)
out = {}
for name, (f, r) in cells.items():
    try:
        out[name] = tmin(f, r)
    except Exception as e:
        out[name] = None
        print(name, type(e).__name__, e, file=sys.stderr)
print(json.dumps(out))

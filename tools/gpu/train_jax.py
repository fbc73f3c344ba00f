#!/usr/bin/env python3
"""train_jax.py: a small deterministic JAX training job for checking
libremat on a real GPU (tools/gpu/validate-jax.sh runs it).

A residual MLP classifier written with jax.numpy alone (no flax, no
optax): an input projection, --depth pre-norm blocks (layer norm, a 4x
wide GELU layer, dropout, back to the width, added to the stream), a
final layer norm and head, cross-entropy against labels of a fixed random
linear teacher, Adam.  One jax.jit step (parameters and optimizer state
donated, as training loops do); each step's batch is made on the host and
copied to the device.  Matmuls at "highest" precision (no TF32) and
XLA_FLAGS gains --xla_gpu_deterministic_ops=true (unless it already has
a determinism flag): two runs print the same bytes, and so must a run
under libremat.

Output (stdout, or --output FILE): one line per step, the loss as
float.hex(), then the sha256 of every parameter's name and bytes:

    iter 0 loss 0x1.6a09e60000000p+1
    ...
    checksum 3f1c...

Timings, memory and the allocator variables this process started with go
to --stats FILE (JSON).  Exit 77 (one "SKIP:" line on stderr) when jax is
missing or, with --platform gpu (the default), has no GPU backend.
"""
import argparse
import hashlib
import json
import os
import statistics
import sys
import time

SKIP = 77
# What libremat sets at load (core/frameworks.c), recorded as seen here.
ALLOC_VARS = ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_ALLOCATOR",
              "XLA_PYTHON_CLIENT_MEM_FRACTION")
DETERMINISM_FLAGS = ("--xla_gpu_deterministic_ops", "--xla_gpu_exclude_nondeterministic_ops")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=20, help="optimizer steps")
    p.add_argument("--batch", type=int, default=512, help="rows per step")
    p.add_argument("--in", dest="in_dim", type=int, default=256, help="input features")
    p.add_argument("--width", type=int, default=1024, help="model width")
    p.add_argument("--depth", type=int, default=4, help="residual blocks")
    p.add_argument("--classes", type=int, default=16, help="output classes")
    p.add_argument("--dropout", type=float, default=0.1, help="dropout probability")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--seed", type=int, default=1, help="seed of weights, data, dropout")
    p.add_argument("--platform", choices=("gpu", "cpu"), default="gpu",
                   help="gpu (default) or cpu (to test this script)")
    p.add_argument("--output", help="deterministic lines to this file")
    p.add_argument("--stats", help="timings and memory as JSON to this file")
    a = p.parse_args(argv)
    for name in ("iters", "batch", "in_dim", "width", "depth", "classes"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name.replace("_dim", ""))
    if not 0.0 <= a.dropout < 1.0:
        p.error("--dropout must be in [0, 1)")
    return a


def skip(msg):
    print("train_jax: SKIP: %s" % msg, file=sys.stderr)
    return SKIP


def init_params(np, a):
    """Weights from a seeded numpy generator: the same on every device."""
    rng = np.random.RandomState(a.seed)

    def dense(fan_in, fan_out):
        return (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)

    p = {"in.w": dense(a.in_dim, a.width), "in.b": np.zeros(a.width, np.float32)}
    for i in range(a.depth):
        p["block%d.ln.g" % i] = np.ones(a.width, np.float32)
        p["block%d.ln.b" % i] = np.zeros(a.width, np.float32)
        p["block%d.up.w" % i] = dense(a.width, 4 * a.width)
        p["block%d.up.b" % i] = np.zeros(4 * a.width, np.float32)
        p["block%d.down.w" % i] = dense(4 * a.width, a.width)
        p["block%d.down.b" % i] = np.zeros(a.width, np.float32)
    p["out.ln.g"] = np.ones(a.width, np.float32)
    p["out.ln.b"] = np.zeros(a.width, np.float32)
    p["out.w"] = dense(a.width, a.classes)
    p["out.b"] = np.zeros(a.classes, np.float32)
    return p


def batch_for(np, a, teacher, step):
    """Inputs from a per-step generator; labels from a fixed linear teacher
    with some noise, so the loss falls from about ln(classes)."""
    rng = np.random.RandomState(a.seed * 1000003 + step * 101)
    x = rng.standard_normal((a.batch, a.in_dim)).astype(np.float32)
    scores = x @ teacher + 0.5 * rng.standard_normal((a.batch, a.classes))
    return x, scores.argmax(axis=1).astype(np.int32)


def make_step(jax, jnp, a):
    def layer_norm(h, g, b):
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        return (h - mu) * jax.lax.rsqrt(var + 1e-5) * g + b

    def dropout(h, key):
        if a.dropout == 0.0:
            return h
        keep = jax.random.bernoulli(key, 1.0 - a.dropout, h.shape)
        return jnp.where(keep, h / (1.0 - a.dropout), 0.0)

    def loss_fn(p, x, y, key):
        h = x @ p["in.w"] + p["in.b"]
        for i in range(a.depth):
            key, k = jax.random.split(key)
            u = layer_norm(h, p["block%d.ln.g" % i], p["block%d.ln.b" % i])
            u = jax.nn.gelu(u @ p["block%d.up.w" % i] + p["block%d.up.b" % i])
            h = h + dropout(u @ p["block%d.down.w" % i] + p["block%d.down.b" % i], k)
        logits = layer_norm(h, p["out.ln.g"], p["out.ln.b"]) @ p["out.w"] + p["out.b"]
        # One-hot rather than a gather: its gradient is a matmul-like
        # product, not a scatter (whose GPU kernels may use atomics).
        logp = jax.nn.log_softmax(logits)
        return -(jax.nn.one_hot(y, a.classes, dtype=logp.dtype) * logp).sum(-1).mean()

    tree_map = jax.tree_util.tree_map

    def step(p, opt, x, y, key):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y, key)
        t = opt["t"] + 1
        b1, b2 = 0.9, 0.999
        m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, opt["m"], g)
        v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, opt["v"], g)
        tf = t.astype(jnp.float32)
        c1, c2 = 1 - b1**tf, 1 - b2**tf
        p = tree_map(lambda p, m, v: p - a.lr * (m / c1) / (jnp.sqrt(v / c2) + 1e-8), p, m, v)
        return p, {"m": m, "v": v, "t": t}, loss

    # Parameters and optimizer state are donated: updated in place, as in
    # real training loops (a CPU backend cannot use donations).
    return jax.jit(step, donate_argnums=(0, 1) if a.platform == "gpu" else ())


def memory_peak(dev):
    """The allocator's peak, where the backend reports one."""
    try:
        stats = dev.memory_stats() or {}
    except Exception:  # not every backend or allocator implements it
        return None
    return stats.get("peak_bytes_in_use")


def main(argv):
    a = parse_args(argv)
    env_at_start = {k: os.environ.get(k) for k in ALLOC_VARS}
    if a.platform == "cpu":
        os.environ["JAX_PLATFORMS"] = "cpu"
    else:
        # Before jax is imported: XLA reads its flags once.
        flags = os.environ.get("XLA_FLAGS", "")
        if not any(f in flags for f in DETERMINISM_FLAGS):
            os.environ["XLA_FLAGS"] = (flags + " --xla_gpu_deterministic_ops=true").strip()
    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
    except ImportError as e:
        return skip("no JAX (import jax: %s)" % e)
    jax.config.update("jax_default_matmul_precision", "highest")
    try:
        backend = jax.default_backend()
    except RuntimeError as e:
        return skip("JAX cannot start a backend: %s" % str(e).splitlines()[0])
    if backend != a.platform:
        return skip("no GPU for JAX: its default backend is '%s' (jax %s: a jaxlib without "
                    "the CUDA plugin?)" % (backend, jax.__version__))
    dev = jax.devices()[0]

    params = {k: jax.device_put(v, dev) for k, v in init_params(np, a).items()}
    zeros = {k: jnp.zeros_like(v) for k, v in params.items()}
    opt = {"m": zeros, "v": {k: jnp.zeros_like(v) for k, v in params.items()},
           "t": jnp.zeros((), jnp.int32)}
    teacher = np.random.RandomState(a.seed + 7).standard_normal((a.in_dim, a.classes))
    step_fn = make_step(jax, jnp, a)
    rng = jax.random.PRNGKey(a.seed)

    out = open(a.output, "w") if a.output else sys.stdout
    times = []
    for step in range(a.iters):
        x, y = batch_for(np, a, teacher, step)
        t0 = time.perf_counter()
        x, y = jax.device_put(x, dev), jax.device_put(y, dev)
        params, opt, loss = step_fn(params, opt, x, y, jax.random.fold_in(rng, step))
        value = float(loss)  # waits for the step
        times.append(time.perf_counter() - t0)
        print("iter %d loss %s" % (step, value.hex()), file=out, flush=True)

    h = hashlib.sha256()
    for name in sorted(params):
        h.update(name.encode())
        h.update(np.asarray(params[name]).tobytes())
    print("checksum %s" % h.hexdigest(), file=out, flush=True)
    if out is not sys.stdout:
        out.close()

    tail = times[len(times) // 2:]  # after compilation, profiling and planning
    stats = {
        "rank": 0,
        "jax": jax.__version__,
        "device": getattr(dev, "device_kind", str(dev)),
        "iters": a.iters,
        "iter_s": times,
        "median_iter_s_second_half": statistics.median(tail),
        "framework_peak_bytes": memory_peak(dev),
        "activation_peak_bytes": None,
        "env": env_at_start,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }
    print("train_jax: median step %.2f ms on %s" % (1e3 * stats["median_iter_s_second_half"],
                                                    stats["device"]), file=sys.stderr)
    if a.stats:
        with open(a.stats, "w") as f:
            json.dump(stats, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

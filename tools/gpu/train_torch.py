#!/usr/bin/env python3
"""train_torch.py: a small deterministic PyTorch training job for checking
libremat on a real GPU (tools/gpu/validate-pytorch.sh runs it).

An embedding, one residual MLP block, then pre-norm transformer blocks
(causal attention written out with matmuls, so every kernel is a plain
one), a vocabulary head, cross-entropy, AdamW.  Fixed seeds and
torch.use_deterministic_algorithms(True): two runs print the same bytes,
and so must a run under libremat.

Output (stdout, or --output FILE): one line per step, the loss as
float.hex(), then the sha256 of every parameter's bytes:

    iter 0 loss 0x1.bb1f3e0000000p+2
    ...
    checksum 3f1c...

Timings and memory go to stderr and to --stats FILE (JSON).  With --ddp
(run under torchrun) each rank writes its own --output/--stats; "{rank}" in
those names becomes the rank.

--graphs runs the step through CUDA graphs, the ways PyTorch offers:
  blocks   the transformer blocks graphed by torch.cuda.make_graphed_callables
           (forward and backward captured once, replayed every step; the
           embeddings, head, loss and optimizer eager)
  step     the whole step (forward, backward, AdamW with capturable=True)
           captured with torch.cuda.graph after 3 eager steps on a side
           stream, then replayed: only the batch copy stays outside
  compile  torch.compile(mode="reduce-overhead"): inductor's kernels in
           CUDA graph trees
Each mode prints the same bytes on every run, not the bytes of eager mode.

Exit 77 (with one "SKIP:" line on stderr) when torch or a GPU is missing,
or when this PyTorch cannot run the --graphs mode asked for (no
torch.compile or triton, a step it cannot capture).
"""
import os

# cuBLAS is deterministic only with a fixed workspace; this must be set
# before the first cuBLAS handle exists, so before torch is imported.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

SKIP = 77


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=20, help="optimizer steps")
    p.add_argument("--batch", type=int, default=16, help="sequences per step")
    p.add_argument("--seq", type=int, default=256, help="sequence length")
    p.add_argument("--width", type=int, default=512, help="model width")
    p.add_argument("--heads", type=int, default=8, help="attention heads")
    p.add_argument("--blocks", type=int, default=2, help="transformer blocks")
    p.add_argument("--vocab", type=int, default=1024, help="vocabulary size")
    p.add_argument("--dropout", type=float, default=0.1, help="dropout probability")
    p.add_argument("--lr", type=float, default=1e-3, help="AdamW learning rate")
    p.add_argument("--seed", type=int, default=1, help="seed of weights, data, dropout")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu (to test this script)")
    p.add_argument("--ddp", action="store_true", help="DistributedDataParallel, under torchrun")
    p.add_argument("--graphs", choices=("none", "blocks", "step", "compile"), default="none",
                   help="run the step through CUDA graphs (see above)")
    p.add_argument("--output", help="deterministic lines to this file ({rank} expands)")
    p.add_argument("--stats", help="timings and memory as JSON to this file ({rank} expands)")
    a = p.parse_args(argv)
    for name in ("iters", "batch", "seq", "width", "heads", "blocks", "vocab"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name)
    if a.width % a.heads:
        p.error("--width (%d) must be a multiple of --heads (%d)" % (a.width, a.heads))
    if not 0.0 <= a.dropout < 1.0:
        p.error("--dropout must be in [0, 1)")
    if a.graphs != "none" and (a.ddp or a.device != "cuda"):
        p.error("--graphs %s needs --device cuda and no --ddp" % a.graphs)
    return a


def skip(msg):
    print("train_torch: SKIP: %s" % msg, file=sys.stderr)
    return SKIP


def build_model(torch, a):
    nn = torch.nn
    F = torch.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(a.width)
            self.fc1 = nn.Linear(a.width, 4 * a.width)
            self.fc2 = nn.Linear(4 * a.width, a.width)
            self.drop = nn.Dropout(a.dropout)

        def forward(self, x):
            return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln(x)))))

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(a.width)
            self.qkv = nn.Linear(a.width, 3 * a.width)
            self.proj = nn.Linear(a.width, a.width)
            self.drop = nn.Dropout(a.dropout)
            # Not a buffer: DDP's gloo cannot broadcast bool tensors.  Made
            # before any capture (make_mask), not inside a graph's pool.
            self.mask = None

        def forward(self, x):
            b, s, c = x.shape
            hd = c // a.heads
            q, k, v = self.qkv(self.ln(x)).split(c, dim=2)
            q, k, v = (t.reshape(b, s, a.heads, hd).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / hd**0.5)
            if self.mask is None or self.mask.shape[0] != s:
                self.mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            att = att.masked_fill(self.mask, float("-inf")).softmax(dim=-1)
            y = (self.drop(att) @ v).transpose(1, 2).reshape(b, s, c)
            return x + self.drop(self.proj(y))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(a.vocab, a.width)
            self.pos = nn.Embedding(a.seq, a.width)
            self.mlp = MLP()
            self.blocks = nn.ModuleList(
                nn.Sequential(Attention(), MLP()) for _ in range(a.blocks))
            self.ln = nn.LayerNorm(a.width)
            self.head = nn.Linear(a.width, a.vocab)

        def forward(self, tokens):
            pos = torch.arange(tokens.shape[1], device=tokens.device)
            x = self.mlp(self.tok(tokens) + self.pos(pos))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return Net()


def make_masks(torch, model, a, dev):
    """The attention masks, made once on the device before anything is
    captured (a tensor made during a capture lives in the graph's pool)."""
    for m in model.modules():
        if hasattr(m, "mask"):
            m.mask = torch.ones(a.seq, a.seq, dtype=torch.bool, device=dev).triu(1)


class StepGraph:
    """--graphs step: the whole training step in one CUDA graph, as in
    PyTorch's whole-network capture recipe: eager warm-up steps on a side
    stream (real steps: their losses are printed), grads set to None so
    that backward allocates them from the graph's pool, then one capture
    of forward + backward + AdamW (capturable) reading static inputs."""

    WARMUP = 3

    def __init__(self, torch, a, model, opt, dev):
        self.torch, self.a, self.model, self.opt = torch, a, model, opt
        self.graph = None
        self.x = torch.zeros(a.batch, a.seq, dtype=torch.long, device=dev)
        self.y = torch.zeros(a.batch, a.seq, dtype=torch.long, device=dev)
        self.loss = None
        self.side = torch.cuda.Stream(dev)

    def _body(self):
        torch, a = self.torch, self.a
        logits = self.model(self.x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, a.vocab), self.y.reshape(-1))
        loss.backward()
        self.opt.step()
        return loss

    def step(self, step, x, y):
        torch = self.torch
        self.x.copy_(x, non_blocking=False)
        self.y.copy_(y, non_blocking=False)
        if step < self.WARMUP:
            self.side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.side):
                self.opt.zero_grad(set_to_none=True)
                loss = self._body()
            torch.cuda.current_stream().wait_stream(self.side)
            return loss.item()
        if self.graph is None:
            self.opt.zero_grad(set_to_none=True)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.loss = self._body()
        self.graph.replay()
        return self.loss.item()


def eager_step(torch, a, net, opt, x, y):
    """One optimizer step; returns the loss (waiting for the step)."""
    opt.zero_grad(set_to_none=True)
    logits = net(x)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, a.vocab), y.reshape(-1))
    loss.backward()
    opt.step()
    return loss.item()


def graph_blocks(torch, a, model, dev):
    """--graphs blocks: each transformer block through
    make_graphed_callables (its own warm-up, then forward and backward
    captured); the model calls the graphed callables from then on."""
    sample = torch.randn(a.batch, a.seq, a.width, device=dev, requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(
        tuple(model.blocks), tuple((sample,) for _ in model.blocks))
    for i, g in enumerate(graphed):
        model.blocks[i] = g


def compiled(torch, model):
    """--graphs compile: torch.compile(mode="reduce-overhead"), or the
    reason it cannot run here."""
    if not hasattr(torch, "compile"):
        return None, "torch %s has no torch.compile" % torch.__version__
    import importlib.util
    if importlib.util.find_spec("triton") is None:  # inductor's GPU code generator
        return None, "torch.compile's inductor needs triton, which is not installed"
    return torch.compile(model, mode="reduce-overhead"), None


def batch_for(torch, a, step, rank):
    """Tokens follow next = (5 * tok + 3) mod vocab with 10% noise, made on
    the host from a per-step generator and copied to the device (so the
    copy from host memory is part of every iteration, as in real jobs)."""
    g = torch.Generator().manual_seed(a.seed * 1000003 + step * 101 + rank)
    n = a.seq + 1
    start = torch.randint(0, a.vocab, (a.batch, 1), generator=g)
    seq = [start]
    for _ in range(n - 1):
        nxt = (5 * seq[-1] + 3) % a.vocab
        noise = torch.rand(a.batch, 1, generator=g) < 0.1
        seq.append(torch.where(noise, torch.randint(0, a.vocab, (a.batch, 1), generator=g), nxt))
    data = torch.cat(seq, dim=1)
    return data[:, :-1], data[:, 1:]


def tensor_bytes(torch, t):
    t = t.detach().cpu().contiguous()
    try:
        return t.numpy().tobytes()
    except (ImportError, RuntimeError, TypeError):  # a torch installed without numpy
        return bytes(t.reshape(-1).view(torch.uint8).tolist())


def main(argv):
    a = parse_args(argv)
    try:
        import torch
    except ImportError as e:
        return skip("no PyTorch (import torch: %s)" % e)
    rank, world, local = 0, 1, 0
    if a.ddp:
        if "LOCAL_RANK" not in os.environ:
            print("train_torch: --ddp runs under torchrun (LOCAL_RANK is unset)", file=sys.stderr)
            return 2
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local = int(os.environ["LOCAL_RANK"])
    if a.device == "cuda":
        if not torch.cuda.is_available():
            return skip("no GPU: torch.cuda.is_available() is False (torch %s)" % torch.__version__)
        if local >= torch.cuda.device_count():
            return skip("rank %d needs GPU %d, only %d visible"
                        % (rank, local, torch.cuda.device_count()))
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
        # fp32 matmuls, not TF32: the same math on every GPU generation.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
    elif a.device == "cpu":
        dev = torch.device("cpu")
    else:
        print("train_torch: --device must be cuda or cpu", file=sys.stderr)
        return 2
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(a.seed)

    model = build_model(torch, a).to(dev)
    make_masks(torch, model, a, dev)
    net = model
    if a.graphs == "blocks":
        try:
            graph_blocks(torch, a, model, dev)
        except RuntimeError as e:
            return skip("PyTorch cannot graph the blocks (make_graphed_callables): %s"
                        % str(e).splitlines()[0])
    elif a.graphs == "compile":
        net, why = compiled(torch, model)
        if net is None:
            return skip(why)
    if a.ddp:
        import torch.distributed as dist
        dist.init_process_group("nccl" if dev.type == "cuda" else "gloo")
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[local] if dev.type == "cuda" else None)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01,
                            **({"capturable": True} if a.graphs == "step" else {}))
    whole = StepGraph(torch, a, model, opt, dev) if a.graphs == "step" else None
    mark_step = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)

    out = open(a.output.replace("{rank}", str(rank)), "w") if a.output else sys.stdout
    cuda = dev.type == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize(dev)

    times, act_peak = [], None
    for step in range(a.iters):
        x, y = batch_for(torch, a, step, rank)
        sync()
        t0 = time.perf_counter()
        if cuda and step == 1:
            # Step 1 (step 0 allocates the optimizer state): the peak of
            # forward + backward above what lives across steps.
            torch.cuda.reset_peak_memory_stats(dev)
            base = torch.cuda.memory_allocated(dev)
        x, y = x.to(dev), y.to(dev)
        if whole is not None:
            try:
                value = whole.step(step, x, y)
            except RuntimeError as e:
                if step != whole.WARMUP:
                    raise
                return skip("PyTorch cannot capture the whole step (torch.cuda.graph): %s"
                            % str(e).splitlines()[0])
        else:
            if a.graphs == "compile" and mark_step is not None:
                mark_step()  # a new step: cudagraph trees may reuse the last one's outputs
            try:
                value = eager_step(torch, a, net, opt, x, y)
            except Exception as e:  # inductor's errors are of many classes
                # Compiling happens in the first step (forward and backward).
                if a.graphs != "compile" or step > 0:
                    raise
                return skip("torch.compile(mode='reduce-overhead') cannot compile the model: %s: %s"
                            % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        sync()
        times.append(time.perf_counter() - t0)
        if cuda and step == 1:
            act_peak = torch.cuda.max_memory_allocated(dev) - base
        print("iter %d loss %s" % (step, float(value).hex()), file=out, flush=True)

    h = hashlib.sha256()
    for name, p in model.named_parameters():
        h.update(name.encode())
        h.update(tensor_bytes(torch, p))
    print("checksum %s" % h.hexdigest(), file=out, flush=True)
    if out is not sys.stdout:
        out.close()

    tail = times[len(times) // 2:]  # after warm-up, profiling and planning
    stats = {
        "rank": rank,
        "world": world,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(dev) if cuda else "cpu",
        "iters": a.iters,
        "iter_s": times,
        "median_iter_s_second_half": statistics.median(tail),
        "max_memory_allocated": torch.cuda.max_memory_allocated(dev) if cuda else None,
        "max_memory_reserved": torch.cuda.max_memory_reserved(dev) if cuda else None,
        "activation_peak_bytes": act_peak,
        "framework_peak_bytes": torch.cuda.max_memory_allocated(dev) if cuda else None,
        "graphs": a.graphs,
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        # As this process saw them at start: libremat sets them at load.
        "env": {k: os.environ.get(k) for k in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF")},
    }
    print("train_torch: rank %d: median step %.2f ms, activations %s MiB, max allocated %s MiB"
          % (rank, 1e3 * stats["median_iter_s_second_half"],
             "%.1f" % (act_peak / 2**20) if act_peak is not None else "-",
             "%.1f" % (stats["max_memory_allocated"] / 2**20) if cuda else "-"),
          file=sys.stderr)
    if a.stats:
        with open(a.stats.replace("{rank}", str(rank)), "w") as f:
            json.dump(stats, f, indent=1)
    if a.ddp:
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

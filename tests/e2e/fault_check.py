"""fault_check.py — judges the runs of one fault sweep (tests/e2e/fault_lib.sh)
in one process, where a shell would start a dozen programs a run.  A run is
a directory as the simulator gives a sweep's child (sim/README.md): stdout,
stderr, report, status, and s.d if it wrote a trace; SWEEP/N are the forked
children, SWEEP the run that forked them, SWEEP/fresh/N processes of their
own at the same N, which must end as the forked child did.

    fault_check.py SWEEP --plain OUT --errors REGEX --label L [--first N]
        [--last N] [--tag REGEX] [--traces FILE] [--summary FILE]
"""
import argparse
import os
import re
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def read(d, name):
    try:
        with open(os.path.join(d, name), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def judge(d, at, a, plain, n=0):
    """One run, by the checks of fault_lib.sh's header: (status, stdout,
    class) with class "none" (no fault fired), "clean", "tagged" (clean, its
    stderr matching --tag) or "ended"."""
    status, out, err, report = (read(d, f) for f in ("status", "stdout", "stderr", "report"))
    if status is None or out is None or err is None:
        fail(f"{at}: no status, stdout or stderr in {d}")
    rc = int(status)
    err = err.decode(errors="replace")
    last = "; ".join(err.strip().splitlines()[-3:])
    if report is None:
        fail(f"{at}: exit {rc} without the simulator's report: {last}")
    m = re.search(rb"faults_injected=(\d+)", report)
    fired = int(m.group(1)) if m else -1
    if "simcuda: fault" in err or "simcuda: sweep" in err:
        fail(f"{at}: the simulator faulted: {last}")
    messages = [l for l in err.splitlines() if l.startswith("libremat:")]
    if len(messages) > 1:
        fail(f"{at}: more than one message: {' | '.join(messages[:4])}")
    if fired == 0 and n and n <= a.last:
        fail(f"{at}: no fault fired")
    if fired == 0:
        if rc != 0:
            fail(f"{at}: no fault fired, yet exit {rc}: {last}")
        if out != plain:
            fail(f"{at}: no fault fired, yet other output")
        return rc, out, "none"
    if fired != 1:
        fail(f"{at}: faults_injected={fired}, not 1")
    if rc == 0:
        if out != plain:
            fail(f"{at}: exit 0 with other output")
        return rc, out, "tagged" if a.tag and re.search(a.tag, err) else "clean"
    if rc >= 128:
        fail(f"{at}: killed by signal {rc - 128}: {last}")
    if not re.search(a.errors, err):
        fail(f"{at}: exit {rc} without the device error: {last}")
    if not plain.startswith(out):
        fail(f"{at}: printed a loss the plain run does not")
    return rc, out, "ended"


def numbered(d):
    return sorted(int(n) for n in os.listdir(d) if n.isdigit()) if os.path.isdir(d) else []


def forked_runs(a, plain):
    """The forking run and its children: {N: judged}, every N of the range."""
    judge(a.sweep, f"{a.label} (the forking run)", a, plain)
    ns = numbered(a.sweep)
    if not ns:
        return {}
    last = a.last or ns[-1]
    if ns != list(range(a.first, last + 1)):
        fail(f"{a.label}: children {ns[0]}..{ns[-1]} ({len(ns)}), not every N from {a.first} "
             f"to {last}")
    runs = {n: judge(os.path.join(a.sweep, str(n)), f"{a.label} N={n}", a, plain, n) for n in ns}
    for n, r in runs.items():
        if r[2] == "none":
            fail(f"{a.label} N={n}: the forked child fired no fault")
    return runs


def fresh_runs(a, plain, forked):
    """The processes of their own: {N: judged}; each ends as its forked twin."""
    d = os.path.join(a.sweep, "fresh")
    got = {}
    for n in numbered(d):
        got[n] = judge(os.path.join(d, str(n)), f"{a.label} N={n} (a process of its own)", a,
                       plain, n)
        if n in forked and got[n] != forked[n]:
            fail(f"{a.label} N={n}: a process of its own ended otherwise than the forked child "
                 f"(exit {got[n][0]} against {forked[n][0]}, or other output)")
    return got


def main():
    ap = argparse.ArgumentParser(description="Judges the runs of one fault sweep.")
    ap.add_argument("sweep", help="the sweep's directory")
    ap.add_argument("--plain", required=True, help="the output of the run without libremat")
    ap.add_argument("--errors", required=True, help="what a run that fails prints (regex)")
    ap.add_argument("--label", required=True, help="the sweep's name in messages")
    ap.add_argument("--first", type=int, default=1, help="the first N of the range")
    ap.add_argument("--last", type=int, default=0,
                    help="the last N of the range; every run up to it must fire its fault")
    ap.add_argument("--tag", help="counts the clean runs whose stderr matches (regex)")
    ap.add_argument("--traces", help="writes the directories of the traces written there")
    ap.add_argument("--summary", help="writes the line printed there too")
    ap.add_argument("--trace-dir", default="s.d", help="a run's trace directory")
    a = ap.parse_args()
    plain = open(a.plain, "rb").read()
    forked = forked_runs(a, plain) if os.path.exists(os.path.join(a.sweep, "status")) else {}
    fresh = fresh_runs(a, plain, forked)
    runs = forked or fresh
    classes = [r[2] for r in runs.values()]
    if forked:
        what = (f"{len(forked)} runs, every N from {a.first} to {max(forked)}, forked; "
                f"{len(fresh)} of them again in processes of their own, alike")
    else:
        what = f"{len(fresh)} runs up to N={max(fresh, default=0)}, each a process of its own"
    line = (f"{a.label}: {what}; {classes.count('clean') + classes.count('tagged')} clean, "
            f"{classes.count('ended')} ended with the device error")
    if a.tag:
        line += f", {classes.count('tagged')} of the clean ones tagged"
    print(line)
    if a.summary:
        with open(a.summary, "w") as f:
            f.write(line + "\n")
    if a.traces:
        dirs = [a.sweep] + [os.path.join(a.sweep, str(n)) for n in forked]
        dirs += [os.path.join(a.sweep, "fresh", str(n)) for n in fresh]
        with open(a.traces, "w") as f:
            for d in dirs:
                if os.path.exists(os.path.join(d, a.trace_dir, "trace.json")):
                    f.write(os.path.join(d, a.trace_dir) + "\n")


if __name__ == "__main__":
    main()

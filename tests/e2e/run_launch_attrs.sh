#!/bin/sh
# Launch attributes (gpt --launch-attrs: the MLP's GELU launched with a
# cluster of two blocks, whose blocks split each tile by their rank in the
# cluster; every layer norm one cooperative grid with grid.sync()): the
# trace records them per op, and a plan that rebuilds both kinds of
# kernel replays them with the same attributes (cuLaunchKernelEx): the
# output is the plain run's bytes.  Replayed without its cluster the GELU
# would leave half its output unwritten; without the cooperative attribute
# the layer norm's grid.sync() aborts on the simulated device.
. tests/e2e/run_lib.sh
set -- "$TR/gpt" --iters 6 --launch-attrs
run base -- "$@"
read -r _c _p _m <<EOT
$(budgets la "$@")
EOT
python3 - "$tmp/la-trace.d/trace.json" <<'PY' || fail "attributes in the trace"
import json, sys
t = json.load(open(sys.argv[1]))
attrs = {o["name"]: o.get("attrs") for o in t["ops"] if o["kind"] == "kernel"}
assert attrs["bias_gelu_fwd_cluster"] == [{"id": 4, "name": "cluster_dimension", "value": [2, 1, 1]}], attrs
assert attrs["layernorm_fwd_coop"] == [{"id": 2, "name": "cooperative", "value": 1}], attrs
assert attrs["layernorm_param_grad"] is None, attrs  # cuLaunchKernelEx without attributes
PY
prefill la-min "$tmp/la-trace.d" "$_m"
# The plan rebuilds both kinds of kernel.
python3 - "$tmp/la-trace.d/trace.json" "$tmp"/la-min.cache/*.plan.json <<'PY' || fail "the plan replays no cluster or no cooperative kernel"
import json, sys
t = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
names = {t["ops"][s[1]]["name"] for o in p["ops"] for s in o.get("before", []) if s[0] == "replay"}
assert {"bias_gelu_fwd_cluster", "layernorm_fwd_coop"} <= names, names
PY
run_budget la-min base "$_m" "$@"
grep -q "replays" "$tmp/la-min.err" || fail "no replay count"
echo "run_launch_attrs: ok"

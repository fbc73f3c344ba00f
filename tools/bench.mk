# Benchmarks are contributed by each directory's fragment (BENCHES).

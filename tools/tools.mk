# Command-line tools.
-include tools/report/report.mk
-include tools/remat/remat.mk
-include tools/bench.mk

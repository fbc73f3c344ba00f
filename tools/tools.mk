# Command-line tools: remat-report (tools/report/) and remat (tools/remat/).
include tools/report/report.mk
include tools/remat/remat.mk

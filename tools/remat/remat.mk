# tools/remat/: `remat`, the one command for users (run, trace, plan, report).
# Its help text is also its man page (mk/install.mk).

REMAT_TOOL_SRCS := $(addprefix tools/remat/,main.c job.c summary.c tools.c)
REMAT_VERSION ?= 0.1.0
REMAT_GIT := $(shell git rev-parse --short HEAD 2>/dev/null)

$(BUILD)/remat: $(REMAT_TOOL_SRCS) tools/remat/remat.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TOOL_SAN) \
		-DREMAT_VERSION='"$(REMAT_VERSION)$(if $(REMAT_GIT), (git $(REMAT_GIT)))"' \
		-o $@ $(REMAT_TOOL_SRCS)

ALL_TARGETS += $(BUILD)/remat

E2E_TESTS += $(filter-out tests/cli/lib.sh,$(sort $(wildcard tests/cli/*.sh)))

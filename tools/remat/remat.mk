# tools/remat/: `remat`, the one command for users (run, trace, plan, report).
# Its help text is also its man page (mk/install.mk).

REMAT_TOOL_SRCS := $(wildcard tools/remat/*.c)
REMAT_TOOL_OBJS := $(REMAT_TOOL_SRCS:%.c=$(BUILD)/%.o)
REMAT_VERSION ?= 0.1.0
REMAT_GIT := $(shell git rev-parse --short HEAD 2>/dev/null)

$(BUILD)/tools/remat/%.o: tools/remat/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TOOL_SAN) -c $< -o $@
# The version it prints (--version).
$(BUILD)/tools/remat/main.o: CFLAGS += \
	-DREMAT_VERSION='"$(REMAT_VERSION)$(if $(REMAT_GIT), (git $(REMAT_GIT)))"'

$(BUILD)/remat: $(REMAT_TOOL_OBJS)
	$(CC) $(CFLAGS) $(TOOL_SAN) -o $@ $(REMAT_TOOL_OBJS)

ALL_TARGETS += $(BUILD)/remat

E2E_TESTS += $(filter-out tests/cli/lib.sh,$(sort $(wildcard tests/cli/*.sh)))

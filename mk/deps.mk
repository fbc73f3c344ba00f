# The Debian packages the build and the tests need.  Only `make deps`
# installs them (mk/install-deps.sh, apt-get), and make test and make demo
# run it first; every other goal checks, before it builds anything, that
# their headers, libraries and commands are there (mk/check-deps.sh) and
# else stops with one message naming them and `make deps`.
# A check is PACKAGE:HEADER:LIB (a program including HEADER links with
# -lLIB) or PACKAGE:COMMAND.  The tests' packages are checked for the
# goals that run tests.
DEPS_BUILD ?= libglpk-dev:glpk.h:glpk libjansson-dev:jansson.h:jansson \
	libunwind-dev:libunwind.h:unwind help2man:help2man
DEPS_TEST  ?= libcmocka-dev:cmocka.h:cmocka pkg-config:pkg-config man-db:man \
	chromium-headless-shell:chromium-headless-shell python3:python3
DEB_PACKAGES = $(foreach c,$(DEPS_BUILD) $(DEPS_TEST),$(firstword $(subst :, ,$(c))))

# Goals that build nothing, or that run `make deps` and then a make of
# their own (which checks).
DEPS_UNCHECKED := deps fuzz-deps clean help format format-check uninstall test demo
DEPS_GOALS := $(filter-out $(DEPS_UNCHECKED),$(or $(MAKECMDGOALS),all))
DEPS_TEST_GOALS := $(filter check-% bench $(BUILD)/tests/% build/tests/%,$(DEPS_GOALS))
ifneq ($(DEPS_GOALS),)
DEPS_MISSING := $(shell sh mk/check-deps.sh "$(CC)" $(DEPS_BUILD) $(if $(DEPS_TEST_GOALS),$(DEPS_TEST)))
ifneq ($(DEPS_MISSING),)
$(error $(DEPS_MISSING))
endif
endif

.PHONY: deps
deps:
	@sh mk/install-deps.sh $(DEB_PACKAGES)

# make install PREFIX=/usr/local DESTDIR=: remat, remat-plan and remat-report
# in bin/, libremat.so in lib/ (remat finds it in ../lib, and libremat finds
# remat-plan in ../bin), remat's man page (help2man, from the same text as
# `remat --help`) and the documentation where a Debian system keeps them.

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
MANDIR  ?= $(PREFIX)/share/man
DOCDIR  ?= $(PREFIX)/share/doc/libremat
INSTALL ?= install

INSTALL_BINS := $(BUILD)/remat $(BUILD)/remat-plan $(BUILD)/remat-report \
	tools/remat-torchrun-wrapper.sh
# docs/ keeps its name: README.md links into it.
INSTALL_DOCS := $(wildcard docs/*.md)

$(BUILD)/remat.1: $(BUILD)/remat
	help2man --no-info --section=1 \
		--name="run a GPU training job within a memory budget, trace, plan, report" \
		--output=$@ $(BUILD)/remat
# Debian's manual pages are gzipped, with no name or time stamp inside.
$(BUILD)/remat.1.gz: $(BUILD)/remat.1
	gzip -9n -c $< >$@

ALL_TARGETS += $(BUILD)/remat.1.gz

.PHONY: install uninstall
install: $(INSTALL_BINS) $(BUILD)/libremat.so $(BUILD)/remat.1.gz
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(DOCDIR)/docs
	$(INSTALL) -m 755 $(INSTALL_BINS) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 644 $(BUILD)/libremat.so $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 $(BUILD)/remat.1.gz $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 README.md $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/docs/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INSTALL_BINS))) \
		$(DESTDIR)$(LIBDIR)/libremat.so $(DESTDIR)$(MANDIR)/man1/remat.1.gz \
		$(DESTDIR)$(DOCDIR)/README.md $(addprefix $(DESTDIR)$(DOCDIR)/,$(INSTALL_DOCS))
	-rmdir $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)

# Debian packages the build and tests need; installed once when missing.
DEB_PACKAGES := libglpk-dev libjansson-dev libunwind-dev libcmocka-dev pkg-config help2man man-db chromium-headless-shell

.PHONY: deps deps-ok
deps:
	@sh mk/install-deps.sh $(DEB_PACKAGES)
# Cheap check used by `all`: install only when a package is missing.
deps-ok:
	@sh mk/install-deps.sh --check-only $(DEB_PACKAGES) || sh mk/install-deps.sh $(DEB_PACKAGES)

/* Human units for sizes, times and call stacks. */
#include "report.h"

#include <inttypes.h>
#include <string.h>

char *rr_bytes(int64_t bytes, char *buf, size_t len)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = 0;

	if (bytes < 1024 && bytes > -1024) {
		snprintf(buf, len, "%" PRId64 " B", bytes);
		return buf;
	}
	while ((v >= 1024 || v <= -1024) && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

char *rr_ns(int64_t ns, char *buf, size_t len)
{
	if (ns < 0)
		snprintf(buf, len, "?");
	else if (ns < 1000)
		snprintf(buf, len, "%" PRId64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
	return buf;
}

/* Process start-up frames (libc calling main) are below every stack and
 * say nothing about the buffer. */
static bool startup_frame(const char *f)
{
	return strncmp(f, "__libc_start", 12) == 0 || strncmp(f, "__libc_init_first", 17) == 0 ||
	       strncmp(f, "_start+", 7) == 0 || strncmp(f, "_start ", 7) == 0;
}

const char *rr_frame(const struct pl_buffer *b, int k, size_t *len)
{
	const char *f = b->site && *b->site ? b->site : NULL;
	for (; f && k > 0; k--) {
		f = strchr(f, '\n');
		if (f)
			f++;
	}
	if (f)
		*len = strcspn(f, "\n");
	return f;
}

int rr_nframes(const struct pl_buffer *b)
{
	int n = 0;
	size_t len;
	while (rr_frame(b, n, &len))
		n++;
	return n;
}

/* `frames` frames of the allocation stack from frame `skip` on (never
 * skipping the last one), without start-up frames, joined by sep. */
char *rr_site(const struct pl_buffer *b, int skip, int frames, const char *sep, char *buf,
              size_t len)
{
	size_t at = 0, fl;
	int nsite = rr_nframes(b);
	buf[0] = 0;
	if (nsite == 0) {
		snprintf(buf, len, "(no call stack)");
		return buf;
	}
	if (skip > nsite - 1)
		skip = nsite - 1;
	for (int i = skip, shown = 0; i < nsite && shown < frames && at < len; i++) {
		const char *fr = rr_frame(b, i, &fl);
		if (shown > 0 && startup_frame(fr))
			continue;
		int n = snprintf(buf + at, len - at, "%s%.*s", shown ? sep : "", (int)fl, fr);
		shown++;
		if (n < 0)
			break;
		at += (size_t)n;
	}
	return buf;
}

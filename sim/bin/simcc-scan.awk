# simcc-scan.awk — the middle step of sim/bin/simcc.  Reads a .cu file as the
# preprocessor left it (g++ -E with simcuda_kernel.h force-included, CUDA's
# qualifiers __global__ & co. kept as words) and
#
#   prints the same text, ready to compile as one C++ translation unit:
#     - the body of a host function that launches with <<<...>>> becomes
#       `{ __builtin_unreachable(); }` (the module never runs host code;
#       g++ could not parse the launch syntax);
#     - `static` goes from kernel declarations, so a kernel's symbol name is
#       the one nvcc registers for it;
#     - `extern __shared__ T name[];` becomes
#       `static simcuda_dynamic_shared<T> name;` (see simcuda_kernel.h);
#     each edit keeps the line count, so #line markers stay right;
#
#   writes to the file named by -v scan_out=FILE what simcc must register:
#     kernel NAME SYNC   each __global__ definition, in order; NAME is
#                        qualified by its named namespaces; SYNC is 1 when
#                        the kernel reaches __syncthreads or a warp-level
#                        primitive, directly or through what it calls
#     cost NAME FN       the cost function SIMCUDA_COST(NAME) defined (FN)
#     work NAME FN       the work function SIMCUDA_WORK(NAME) defined (FN)
#     defaultcost        the file defines SIMCUDA_DEFAULT_COST
#     error FILE:LINE: MESSAGE
#
# Only text from the .cu and its own headers is scanned: files the
# preprocessor marks as system headers (flag 3: the CUDA toolkit, libc,
# the shim) pass through untouched.  It is a token scanner,
# not a C++ parser: string and character literals are blanked, then
# declarations are followed brace by brace, treating extern "C",
# namespace, struct, class and union bodies as transparent.
BEGIN {
	nlines = 0; sysfile = 0; curfile = ""; curline = 0
	# What makes a kernel run its threads as fibers.
	split("simcuda_syncthreads __syncwarp __shfl_sync __shfl_up_sync __shfl_down_sync " \
	      "__shfl_xor_sync __ballot_sync __any_sync __all_sync __activemask simcuda_warp " \
	      "simcuda_activemask sync reduce shfl shfl_up shfl_down shfl_xor ballot any all", w, " ")
	for (i in w) syncs[w[i]] = 1
}
{
	line[++nlines] = $0
	if ($0 ~ /^# [0-9]+ "/) {
		kind[nlines] = "marker"
		curline = $2 + 0
		curfile = $3; gsub(/^"|"$/, "", curfile)
		# Flag 3 on entering or leaving a file (1, 2) marks a system
		# header; alone it marks a system macro's expansion inside the
		# user's code, which is scanned like the rest of it.
		entering = 0; sys = 0
		for (i = 4; i <= NF; i++) { if ($i == "1" || $i == "2") entering = 1; if ($i == "3") sys = 1 }
		if (entering && sys) sysfiles[curfile] = 1
		sysfile = (curfile in sysfiles)
		next
	}
	if (sysfile || $0 ~ /^[ \t]*#/) { kind[nlines] = "pass"; curline++; next }
	kind[nlines] = "code"
	where[nlines] = curfile ":" curline
	curline++
}
END {
	build(); clean(); tokenize(); scan(); edit(); emit(); report()
}

# The code lines, joined: what is scanned and edited.
function build(    i) {
	src = ""; nbuf = 0
	for (i = 1; i <= nlines; i++) {
		if (kind[i] != "code") continue
		bufline[++nbuf] = i
		src = src line[i] "\n"
	}
}

# Same length as src, literals blanked (quotes kept).
function clean(    i, n, c, st, out, piece, start) {
	n = length(src); out = ""; st = 0; start = 1
	for (i = 1; i <= n; i++) {
		c = substr(src, i, 1)
		if (st == 0) {
			if (c == "\"" || c == "'") {
				out = out substr(src, start, i - start + 1); st = c; start = i + 1
			}
		} else if (c == "\\") {
			i++
		} else if (c == st) {
			piece = i - start
			out = out sprintf("%" piece "s", "") c
			st = 0; start = i + 1
		}
	}
	text = out substr(src, start)
}

function tokenize(    s, at, m) {
	ntok = 0; s = text; at = 1
	while (length(s) > 0) {
		if (match(s, /^[ \t\n\r]+/)) { s = substr(s, RLENGTH + 1); at += RLENGTH; continue }
		if (match(s, /^[A-Za-z_][A-Za-z0-9_]*/) || match(s, /^[0-9][0-9A-Za-z_.]*/) ||
		    match(s, /^"[ ]*"/) || match(s, /^'[ ]*'/)) {
			ntok++; tok[ntok] = substr(s, 1, RLENGTH); tpos[ntok] = at; tend[ntok] = at + RLENGTH
			if (tok[ntok] ~ /^"/) tok[ntok] = "\"\""
			s = substr(s, RLENGTH + 1); at += RLENGTH; continue
		}
		ntok++; tok[ntok] = substr(s, 1, 1); tpos[ntok] = at; tend[ntok] = at + 1
		s = substr(s, 2); at++
	}
}

function ident(t) { return t ~ /^[A-Za-z_][A-Za-z0-9_]*$/ }

# FILE:LINE of the code at position p of src.
function place(p,    k, nl) {
	nl = split(substr(src, 1, p), _parts, "\n")
	k = bufline[nl]
	return where[k]
}

function add_edit(from, to, repl) { nedit++; efrom[nedit] = from; eto[nedit] = to; erepl[nedit] = repl }

# A replacement keeps the newlines of what it replaces.
function keep_lines(from, to, repl,    s, n) {
	s = substr(text, from, to - from)
	n = gsub(/\n/, "", s)
	while (n-- > 0) repl = repl "\n"
	return repl
}

function nsname(    i, q) {
	q = ""
	for (i = 1; i <= nsdepth; i++) if (nsstack[i] != "") q = q nsstack[i] "::"
	return q
}

function reset_decl() { cand = ""; glob = 0; dev = 0; tmpl = 0; nstatic = 0; eq = 0; paren = 0; kw = ""; kwname = "" }

function scan(    i, t, depth, fn, body_start, launches, blk, j) {
	reset_decl(); nsdepth = 0; nopen = 0; nkern = 0; ncost = 0; nwork = 0; nedit = 0; nerr = 0
	for (i = 1; i <= ntok; i++) {
		t = tok[i]
		if (t == "extern" && tok[i + 1] == "__shared__") { i = extern_shared(i); continue }
		if (t == "{") {
			if (cand != "" && !eq) {
				# A function body: follow it to its closing brace.
				fn = cand; body_start = tpos[i]; depth = 1; launches = 0
				if (glob) {
					if (tmpl) err(tpos[i], "template kernel '" fn "' is not supported (register an extern \"C\" wrapper kernel)")
					else { kern[++nkern] = nsname() fn; kname[nkern] = fn }
					drop_statics()
				}
				if (fn ~ /^simcuda_cost_/) { cost[++ncost] = nsname() fn }
				if (fn ~ /^simcuda_work_/) { work[++nwork] = nsname() fn }
				if (fn == "simcuda_default_cost") defcost = 1
				for (i++; i <= ntok && depth > 0; i++) {
					t = tok[i]
					if (t == "{") depth++
					else if (t == "}") depth--
					else if (t == "extern" && tok[i + 1] == "__shared__") i = extern_shared(i)
					else if (t == "<" && tok[i + 1] == "<" && tok[i + 2] == "<" &&
						 tend[i] == tpos[i + 1] && tend[i + 1] == tpos[i + 2]) launches = 1
					else if (ident(t)) calls[fn] = calls[fn] " " t
				}
				i--
				if (launches && !glob && !dev)
					add_edit(body_start, tend[i], keep_lines(body_start, tend[i], "{ __builtin_unreachable(); }"))
				reset_decl()
				continue
			}
			# A transparent block (extern "C", namespace, struct ...)
			# or another block (an initializer, an enum body) to skip.
			blk = (kw != "" && !eq) ? "t" : "b"
			if (blk == "b") {
				depth = 1
				for (i++; i <= ntok && depth > 0; i++) {
					if (tok[i] == "{") depth++
					else if (tok[i] == "}") depth--
				}
				i--
				continue
			}
			opened[++nopen] = (kw == "namespace") ? "n" : "t"
			if (kw == "namespace") nsstack[++nsdepth] = kwname
			reset_decl()
			continue
		}
		if (t == "}") {
			if (nopen > 0 && opened[nopen--] == "n") nsdepth--
			reset_decl()
			continue
		}
		if (t == ";") { if (glob) drop_statics(); reset_decl(); continue }
		if (t == "(") paren++
		else if (t == ")") paren--
		else if (t == "=" && paren == 0) eq = 1
		else if (t == "__global__") glob = 1
		else if (t == "__device__") dev = 1
		else if (t == "template") tmpl = 1
		else if (t == "static") staticpos[++nstatic] = i
		else if (t == "namespace" || t == "struct" || t == "class" || t == "union") {
			if (kw == "") { kw = t; kwname = ident(tok[i + 1]) ? tok[i + 1] : "" }
		} else if (t == "extern" && tok[i + 1] == "\"\"") kw = "extern"
		else if (ident(t) && tok[i + 1] == "(" && paren == 0 && t != "__attribute__" &&
			 t != "alignas" && t != "decltype" && t != "__launch_bounds__") cand = t
	}
}

function drop_statics(    j) {
	for (j = 1; j <= nstatic; j++) add_edit(tpos[staticpos[j]], tend[staticpos[j]], "      ")
	nstatic = 0
}

# extern __shared__ [attributes] TYPE NAME [ ] ;  ->  static simcuda_dynamic_shared<TYPE> NAME;
function extern_shared(i,    j, k, from, depth) {
	for (j = i; j <= ntok && tok[j] != ";"; j++) ;
	k = i + 2
	while (tok[k] == "__attribute__" || tok[k] == "alignas" || tok[k] == "__align__") {
		for (k++; tok[k] != "("; k++) ;
		for (depth = 0; k <= j; k++) {
			if (tok[k] == "(") depth++
			else if (tok[k] == ")" && --depth == 0) { k++; break }
		}
	}
	if (j > ntok || j - 4 < k || tok[j - 1] != "]" || tok[j - 2] != "[" || !ident(tok[j - 3])) {
		err(tpos[i], "extern __shared__ must declare an array of unknown size (extern __shared__ T name[];)")
		return j
	}
	from = tpos[k]
	add_edit(tpos[i], tend[j], keep_lines(tpos[i], tend[j], "static simcuda_dynamic_shared<" \
		 substr(text, from, tpos[j - 3] - from) "> " tok[j - 3] ";"))
	return j
}

function err(p, msg) { errs[++nerr] = place(p) ": " msg }

# Applies the edits (sorted by position; they never overlap) to src.
function edit(    i, j, t, at, out) {
	for (i = 2; i <= nedit; i++)
		for (j = i; j > 1 && efrom[j - 1] > efrom[j]; j--) {
			t = efrom[j]; efrom[j] = efrom[j - 1]; efrom[j - 1] = t
			t = eto[j]; eto[j] = eto[j - 1]; eto[j - 1] = t
			t = erepl[j]; erepl[j] = erepl[j - 1]; erepl[j - 1] = t
		}
	out = ""; at = 1
	for (i = 1; i <= nedit; i++) {
		out = out substr(src, at, efrom[i] - at) erepl[i]
		at = eto[i]
	}
	edited = out substr(src, at)
}

function emit(    n, i, k) {
	n = split(edited, outl, "\n")
	k = 0
	for (i = 1; i <= nlines; i++) {
		if (kind[i] == "code") print outl[++k]
		else print line[i]
	}
}

# Depth-first search over the call lists; `seen` guards recursion.
function reaches(f,    n, parts, j) {
	if (f in syncs) return 1
	if (f in seen) return 0
	seen[f] = 1
	n = split(calls[f], parts, " ")
	for (j = 1; j <= n; j++)
		if (reaches(parts[j])) return 1
	return 0
}

function report(    i, k, name) {
	for (i = 1; i <= nerr; i++) print "error", errs[i] > scan_out
	for (i = 1; i <= nkern; i++) {
		for (k in seen) delete seen[k]
		print "kernel", kern[i], reaches(kname[i]) > scan_out
	}
	for (i = 1; i <= ncost; i++) {
		name = cost[i]; sub(/simcuda_cost_/, "", name)
		print "cost", name, cost[i] > scan_out
	}
	for (i = 1; i <= nwork; i++) {
		name = work[i]; sub(/simcuda_work_/, "", name)
		print "work", name, work[i] > scan_out
	}
	if (defcost) print "defaultcost" > scan_out
	close(scan_out)
}

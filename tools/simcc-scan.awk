# simcc-scan.awk — reads a .cu file and prints what simcc must register:
#   kernel NAME SYNC   one line per __global__ definition, in source order;
#                      SYNC is 1 when the kernel reaches __syncthreads, directly
#                      or through the functions it calls
#   cost NAME          one line per SIMCUDA_COST(NAME) definition
#   defaultcost        when the file defines SIMCUDA_DEFAULT_COST
# It is a token scanner, not a C++ parser: comments, literals and
# preprocessor lines are blanked, then calls are collected per function
# body (brace depth 0 -> 1), treating `extern "C" { ... }` as transparent.
BEGIN { src = "" }
{ src = src $0 "\n" }
END {
	clean(); tokenize(); scan(); report()
}

function clean(    i, n, c, d, st, out, bol) {
	n = length(src); out = ""; st = 0; bol = 1
	for (i = 1; i <= n; i++) {
		c = substr(src, i, 1); d = substr(src, i + 1, 1)
		if (st == 0) {
			if (bol && c == "#") { st = 4; out = out " "; continue }
			if (c != " " && c != "\t" && c != "\n") bol = 0
			if (c == "\n") bol = 1
			if (c == "/" && d == "/") { st = 1; out = out " "; continue }
			if (c == "/" && d == "*") { st = 2; i++; out = out "  "; continue }
			if (c == "\"") { st = 3; out = out "\"\""; continue }
			if (c == "'") { st = 5; out = out "0"; continue }
			out = out c
		} else if (st == 1 || st == 4) {
			# a preprocessor line may continue with a backslash
			if (c == "\\" && d == "\n" && st == 4) { i++; out = out " \n"; continue }
			if (c == "\n") { st = 0; bol = 1; out = out "\n" } else out = out " "
		} else if (st == 2) {
			if (c == "*" && d == "/") { st = 0; i++; out = out "  "; continue }
			out = out (c == "\n" ? "\n" : " ")
		} else if (st == 3 || st == 5) {
			if (c == "\\") { i++; continue }
			if ((st == 3 && c == "\"") || (st == 5 && c == "'")) st = 0
		}
	}
	src = out
}

function tokenize(    s, m) {
	ntok = 0; s = src
	while (length(s) > 0) {
		if (match(s, /^[ \t\n\r]+/)) { s = substr(s, RLENGTH + 1); continue }
		if (match(s, /^[A-Za-z_][A-Za-z0-9_]*/) || match(s, /^[0-9][0-9A-Za-z_.]*/) ||
		    match(s, /^""/)) {
			tok[++ntok] = substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1); continue
		}
		tok[++ntok] = substr(s, 1, 1); s = substr(s, 2)
	}
}

function ident(t) { return t ~ /^[A-Za-z_][A-Za-z0-9_]*$/ }

function scan(    i, t, depth, paren, cand, glob, fn, nb, transparent) {
	depth = 0; paren = 0; cand = ""; glob = 0; fn = ""; nb = 0; nkern = 0; ncost = 0
	for (i = 1; i <= ntok; i++) {
		t = tok[i]
		if (depth == 0) {
			if (t == "__global__") glob = 1
			else if (t == "SIMCUDA_DEFAULT_COST") defcost = 1
			else if (t == "SIMCUDA_COST" && tok[i + 1] == "(" && ident(tok[i + 2])) {
				cost[++ncost] = tok[i + 2]
			}
			if (t == "(") paren++
			else if (t == ")") paren--
			else if (t == ";") { cand = ""; glob = 0 }
			else if (ident(t) && tok[i + 1] == "(" && paren == 0 && t != "__launch_bounds__" &&
				 t != "__attribute__" && t != "__align__" && t != "alignas") cand = t
			else if (t == "{") {
				nb++
				transparent = (tok[i - 1] == "\"\"" && tok[i - 2] == "extern")
				btype[nb] = transparent ? "t" : "n"
				if (transparent) continue
				depth = 1; fn = cand
				if (glob && cand != "") kern[++nkern] = cand
				cand = ""; glob = 0
			} else if (t == "}") {
				nb--
			}
			continue
		}
		if (t == "{") { depth++; nb++; btype[nb] = "n"; continue }
		if (t == "}") {
			depth--; nb--
			if (depth == 0) { fn = ""; cand = ""; glob = 0 }
			continue
		}
		if (fn != "" && ident(t) && (tok[i + 1] == "(" || t == "__syncthreads"))
			calls[fn] = calls[fn] " " t
	}
}

# Depth-first search over the call lists; `seen` guards recursion.
function reaches(f,    n, parts, j) {
	if (f == "__syncthreads") return 1
	if (f in seen) return 0
	seen[f] = 1
	n = split(calls[f], parts, " ")
	for (j = 1; j <= n; j++)
		if (reaches(parts[j])) return 1
	return 0
}

function report(    i, k) {
	for (i = 1; i <= nkern; i++) {
		for (k in seen) delete seen[k]
		print "kernel", kern[i], reaches(kern[i])
	}
	for (i = 1; i <= ncost; i++) print "cost", cost[i]
	if (defcost) print "defaultcost"
}

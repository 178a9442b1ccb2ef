#!/bin/bash
# Checks the library's module structure from its objects' symbol tables (make
# layers): module A needs module B when an object of A uses a global symbol
# that an object of B defines. A cycle between modules fails, and so does a
# file that includes another module's *_internal.h.
#
#   scripts/layers.sh [--src DIR] [--edges] [--dot FILE] [BUILD [SET...]]
#   BUILD       the build folder (default build)
#   SET         a folder of objects under BUILD, each a graph of its own
#               (default lib; "lib fixture" checks the fixture server's too)
#   --src DIR   where each set's sources are, DIR/SET/*.[ch] (default .)
#   --edges     also prints every module edge with all its symbols
#   --dot FILE  also writes the module graphs as Graphviz dot, a cycle's
#               edges in red
#
# A module is an object's name up to its first "_" (frontier_store.o is the
# frontier's, state_redis_lua.o the state's), but each mode_*.o is a module
# of its own: the models are meant to know the core and never each other.
# A header maps the same way, its "_internal" cut off first. A cycle is
# printed as the modules that all reach each other (a strongly connected
# component), with every edge among them and one of its symbols.
# Exit status: 0 no cycle and no foreign internal header, 1 some found,
# 2 a usage error or a set without objects or sources.
set -euo pipefail
export LC_ALL=C

# usage: the block of this comment from its command line to the blank line.
usage() { sed -n '/^#   scripts\/layers.sh/,/^#$/{/^#$/d;s/^# //p}' "$0"; }

src=. edges=0 dot='' args=()
while [ $# -gt 0 ]; do
	case $1 in
	--src)     [ $# -ge 2 ] || { usage >&2; exit 2; }; src=$2; shift 2 ;;
	--src=*)   src=${1#*=}; shift ;;
	--dot)     [ $# -ge 2 ] || { usage >&2; exit 2; }; dot=$2; shift 2 ;;
	--dot=*)   dot=${1#*=}; shift ;;
	--edges)   edges=1; shift ;;
	-h|--help) usage; exit 0 ;;
	-*)        echo "layers.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*)         args+=("$1"); shift ;;
	esac
done
build=${args[0]:-build}
sets=("${args[@]:1}")
[ ${#sets[@]} -gt 0 ] || sets=(lib)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
shopt -s nullglob

# The graph of one set, from three lists: its objects, their global symbols
# (nm -A -g: "FILE:VALUE TYPE NAME") and the lines of its sources that
# include an *_internal.h (grep -H: "FILE:LINE"). Prints the report and
# writes the set's part of the dot file; exits 1 when something was found.
# mawk has no sort: the few short lists here are sorted by insertion.
read -r -d '' graph <<'AWK' || true
function module(path,   b, m) {
	b = path
	sub(/.*\//, "", b)
	sub(/\.[^.]*$/, "", b)
	sub(/_internal$/, "", b)
	if (b ~ /^mode_/)
		return b
	m = b
	sub(/_.*/, "", m)
	return m == "" ? b : m
}
# sorted(S, SEP): the words of S, sorted and without repeats, joined by SEP.
function sorted(s, sep,   w, n, i, j, t, out, k) {
	n = split(s, w, " ")
	for (i = 2; i <= n; i++) {
		t = w[i]
		for (j = i - 1; j >= 1 && w[j] > t; j--)
			w[j + 1] = w[j]
		w[j + 1] = t
	}
	out = ""; k = 0
	for (i = 1; i <= n; i++)
		if (i == 1 || w[i] != w[i - 1])
			out = out (k++ ? sep : "") w[i]
	return out
}
function plural(n, word) {
	n += 0
	return n " " word (n == 1 ? "" : "s")
}
# Tarjan's strongly connected components, over modules and edges in sorted
# order so that the report reads the same every time.
function strong(v,   t, n, i, w, members) {
	idx[v] = low[v] = ++counter
	stack[++sp] = v
	onstack[v] = 1
	n = split(adj[v], t, " ")
	for (i = 1; i <= n; i++) {
		w = t[i]
		if (!(w in idx)) {
			strong(w)
			if (low[w] < low[v])
				low[v] = low[w]
		} else if (onstack[w] && idx[w] < low[v]) {
			low[v] = idx[w]
		}
	}
	if (low[v] != idx[v])
		return
	ncomp++
	members = ""
	do {
		w = stack[sp--]
		onstack[w] = 0
		comp[w] = ncomp
		members = members " " w
		size[ncomp]++
	} while (w != v)
	compmembers[ncomp] = sorted(members, " ")
}
FILENAME == objs {
	objmod[$0] = module($0)
	mods = mods " " objmod[$0]
	next
}
FILENAME == syms {
	name = $NF; type = $(NF - 1)
	file = $0; sub(/:[^:]*$/, "", file)
	if (!(file in objmod))
		next
	m = objmod[file]
	if (type ~ /^[Uwv]$/) {
		nuse++; usemod[nuse] = m; usesym[nuse] = name
	} else if (!((name, m) in defined)) {
		defined[name, m] = 1
		definers[name] = definers[name] " " m
	}
	next
}
FILENAME == incs {
	file = $0; sub(/:.*/, "", file)
	line = $0; sub(/^[^:]*:/, "", line)
	if (!match(line, /["<][^">]*[">]/))
		next
	hdr = substr(line, RSTART + 1, RLENGTH - 2)
	sub(/.*\//, "", hdr)
	fm = module(file); hm = module(hdr)
	shown = file; sub(/^\.\//, "", shown)
	if (fm != hm && !((shown, hdr) in foreign)) {
		foreign[shown, hdr] = 1
		nforeign++
		flist[nforeign] = "  " shown " (" fm ") includes " hdr " (" hm ")"
	}
	next
}
END {
	for (i = 1; i <= nuse; i++) {
		a = usemod[i]; s = usesym[i]
		n = split(definers[s], d, " ")
		for (j = 1; j <= n; j++) {
			b = d[j]
			if (b == a || ((a, b, s) in seen))
				continue
			seen[a, b, s] = 1
			if (!((a, b) in esyms)) {
				nedges++
				targets[a] = targets[a] " " b
			}
			esyms[a, b] = esyms[a, b] " " s
			ecount[a, b]++
		}
	}
	nmods = split(sorted(mods, " "), modlist, " ")
	for (i = 1; i <= nmods; i++)
		adj[modlist[i]] = sorted(targets[modlist[i]], " ")
	for (i = 1; i <= nmods; i++)
		if (!(modlist[i] in idx))
			strong(modlist[i])

	# The cycles, ordered by their first module's name.
	ncyc = 0
	for (c = 1; c <= ncomp; c++) {
		if (size[c] < 2)
			continue
		cm = compmembers[c]
		for (j = ncyc; j >= 1 && cyc[j] > cm; j--) {
			cyc[j + 1] = cyc[j]; cycid[j + 1] = cycid[j]
		}
		cyc[j + 1] = cm; cycid[j + 1] = c
		ncyc++
	}
	for (k = 1; k <= ncyc; k++)
		number[cycid[k]] = k

	printf "%s: %s, %s\n", set, plural(nmods, "module"), plural(nedges, "edge")
	if (edges) {
		print "edges (a module, the module whose symbols it uses: the symbols):"
		for (i = 1; i <= nmods; i++) {
			a = modlist[i]
			n = split(adj[a], t, " ")
			for (j = 1; j <= n; j++) {
				b = t[j]
				mark = (comp[a] == comp[b]) ? " [cycle " number[comp[a]] "]" : ""
				printf "  %s -> %s%s: %s\n", a, b, mark, sorted(esyms[a, b], " ")
			}
		}
	}
	for (k = 1; k <= ncyc; k++) {
		n = split(cyc[k], members, " ")
		printf "cycle %d of %d: %s (%d modules)\n", k, ncyc, sorted(cyc[k], ", "), n
		for (i = 1; i <= n; i++) {
			a = members[i]
			m = split(adj[a], t, " ")
			for (j = 1; j <= m; j++) {
				b = t[j]
				if (comp[b] != comp[a])
					continue
				split(sorted(esyms[a, b], " "), first, " ")
				more = ecount[a, b] > 1 ? ", " (ecount[a, b] - 1) " more" : ""
				printf "  %s -> %s (%s%s)\n", a, b, first[1], more
			}
		}
	}
	if (nforeign) {
		print "foreign internal headers (a file, its module, includes a header, its module):"
		for (i = 1; i <= nforeign; i++)
			print flist[i]
	}
	if (!ncyc && !nforeign)
		printf "%s: no cycle, no foreign internal header\n", set
	else
		printf "%s: %s, %s\n", set, ncyc ? plural(ncyc, "cycle") : "no cycle",
			nforeign ? plural(nforeign, "foreign internal include") : "no foreign internal header"

	if (dotfile != "") {
		printf "  subgraph \"cluster_%s\" {\n    label=\"%s\";\n", set, set > dotfile
		for (i = 1; i <= nmods; i++)
			printf "    \"%s/%s\" [label=\"%s\"];\n", set, modlist[i], modlist[i] > dotfile
		for (i = 1; i <= nmods; i++) {
			a = modlist[i]
			n = split(adj[a], t, " ")
			for (j = 1; j <= n; j++) {
				b = t[j]
				red = (comp[a] == comp[b]) ? ", color=red, fontcolor=red" : ""
				printf "    \"%s/%s\" -> \"%s/%s\" [label=\"%d\"%s];\n", set, a, set, b, ecount[a, b], red > dotfile
			}
		}
		print "  }" > dotfile
	}
	exit (ncyc || nforeign) ? 1 : 0
}
AWK

status=0
for set in "${sets[@]}"; do
	dir=$src/$set
	[ -d "$dir" ] || { echo "layers.sh: no sources in $dir/ (--src DIR)" >&2; exit 2; }
	# An object whose source is gone (a file renamed since the last build)
	# would add modules and edges that the tree no longer has: it is left out.
	objs=()
	for o in "$build/$set"/*.o; do
		stem=$(basename "$o" .o)
		if [ -e "$dir/$stem.c" ] || [ -e "$dir/$stem.S" ]; then
			objs+=("$o")
		else
			echo "layers.sh: $o has no source in $dir/, left out" >&2
		fi
	done
	[ ${#objs[@]} -gt 0 ] || { echo "layers.sh: no objects in $build/$set/ (make first)" >&2; exit 2; }
	printf '%s\n' "${objs[@]}" >"$tmp/objs"
	nm -A -g "${objs[@]}" >"$tmp/syms"
	: >"$tmp/incs"
	sources=("$dir"/*.c "$dir"/*.h)
	if [ ${#sources[@]} -gt 0 ]; then
		grep -H -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]*_internal\.h[">]' \
			"${sources[@]}" >"$tmp/incs" || [ $? -eq 1 ]
	fi
	rc=0
	awk -v set="$set" -v edges="$edges" -v dotfile="${dot:+$tmp/dot.$set}" \
		-v objs="$tmp/objs" -v syms="$tmp/syms" -v incs="$tmp/incs" \
		"$graph" "$tmp/objs" "$tmp/syms" "$tmp/incs" || rc=$?
	[ "$rc" -le 1 ] || exit "$rc"
	[ "$rc" -eq 0 ] || status=1
done

if [ -n "$dot" ]; then
	{
		echo "digraph layers {"
		echo "  node [shape=box, fontname=\"monospace\"];"
		for set in "${sets[@]}"; do cat "$tmp/dot.$set"; done
		echo "}"
	} >"$dot"
fi
exit "$status"

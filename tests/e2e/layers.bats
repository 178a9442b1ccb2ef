#!/usr/bin/env bats
# scripts/layers.sh (make layers) on small C files compiled here, so that
# each way it can fail is seen failing: a cycle between modules, another
# module's internal header included; and once on the real build's lib/.

load helpers
bats_require_minimum_version 1.5.0   # run --separate-stderr

LAYERS="$BATS_TEST_DIRNAME/../../scripts/layers.sh"

# No fixture server: these tests compile objects of their own, into the
# build folder $T/build/lib from the sources in $T/lib.
setup() {
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/lib" "$T/build/lib"
}

# obj NAME C-SOURCE [SET]: writes $T/SET/NAME.c (SET: lib) and compiles it
# to $T/build/SET/NAME.o.
obj() {
	local set=${3:-lib}
	mkdir -p "$T/$set" "$T/build/$set"
	printf '%s\n' "$2" >"$T/$set/$1.c"
	cc -c -o "$T/build/$set/$1.o" "$T/$set/$1.c"
}

# layers [ARGS...]: the script on $T's sources and objects.
layers() {
	"$LAYERS" --src "$T" "$T/build" "$@"
}

@test "two modules that call each other are a cycle, shown with a symbol each way, status 1" {
	obj a 'void b_g(void); void a_f(void) { b_g(); }'
	obj b 'void a_f(void); void b_g(void) { a_f(); }'
	run --separate-stderr layers
	[ "$status" -eq 1 ]
	[ "$output" = "lib: 2 modules, 2 edges
cycle 1 of 1: a, b (2 modules)
  a -> b (b_g)
  b -> a (a_f)
lib: 1 cycle, no foreign internal header" ]
	[ -z "$stderr" ]
}

@test "each mode_ object is a module of its own: two models that call each other are a cycle" {
	obj mode_x 'void mode_y_run(void); void mode_x_run(void) { mode_y_run(); }'
	obj mode_y 'void mode_x_run(void); void mode_y_run(void) { mode_x_run(); }'
	run layers
	[ "$status" -eq 1 ]
	[ "$output" = "lib: 2 modules, 2 edges
cycle 1 of 1: mode_x, mode_y (2 modules)
  mode_x -> mode_y (mode_y_run)
  mode_y -> mode_x (mode_x_run)
lib: 1 cycle, no foreign internal header" ]
}

@test "objects of one module that call each other make no edge and no cycle" {
	obj a_one 'void a_two_f(void); void a_one_f(void) { a_two_f(); }'
	obj a_two 'void a_one_f(void); void a_two_f(void) { a_one_f(); }'
	run layers
	[ "$status" -eq 0 ]
	[ "$output" = "lib: 1 module, 0 edges
lib: no cycle, no foreign internal header" ]
}

@test "a chain of modules with no way back passes with status 0" {
	obj a 'void b_g(void); void a_f(void) { b_g(); }'
	obj b 'void c_h(void); void b_g(void) { c_h(); }'
	obj c 'void c_h(void) {}'
	run layers
	[ "$status" -eq 0 ]
	[ "$output" = "lib: 3 modules, 2 edges
lib: no cycle, no foreign internal header" ]
}

@test "only global symbols make edges: another module's static function of the same name is none" {
	obj a 'void b_g(void); void a_f(void) { b_g(); }'
	obj b 'void a_f(void); static void b_g(void) {} void b_h(void) { b_g(); a_f(); }'
	run layers
	[ "$status" -eq 0 ]
	[ "$output" = "lib: 2 modules, 1 edge
lib: no cycle, no foreign internal header" ]
}

@test "an edge names its first symbol and how many more, counting a symbol used twice once" {
	obj a_one 'void b_1(void), b_2(void); void a_f(void) { b_1(); b_2(); }'
	obj a_two 'void b_2(void), b_3(void); void a_g(void) { b_2(); b_3(); }'
	obj b_one 'void a_f(void); void b_1(void) { a_f(); } void b_2(void) {}'
	obj b_two 'void b_3(void) {}'
	run layers
	[ "$status" -eq 1 ]
	[ "$output" = "lib: 2 modules, 2 edges
cycle 1 of 1: a, b (2 modules)
  a -> b (b_1, 2 more)
  b -> a (a_f)
lib: 1 cycle, no foreign internal header" ]
}

@test "a cycle of three modules lists every edge inside it and none outside" {
	obj a 'void b_g(void), d_k(void); void a_f(void) { b_g(); d_k(); }'
	obj b 'void c_h(void); void b_g(void) { c_h(); }'
	obj c 'void a_f(void); void c_h(void) { a_f(); }'
	obj d 'void d_k(void) {}'
	run layers
	[ "$status" -eq 1 ]
	[ "$output" = "lib: 4 modules, 4 edges
cycle 1 of 1: a, b, c (3 modules)
  a -> b (b_g)
  b -> c (c_h)
  c -> a (a_f)
lib: 1 cycle, no foreign internal header" ]
}

@test "a file that includes another module's internal header is reported, a module's own is not" {
	for h in a_internal.h b_internal.h state_redis_internal.h; do
		echo "struct ${h%.h};" >"$T/lib/$h"
	done
	printf '%s\n' '#include "a_internal.h"' >"$T/lib/c.h"
	obj a '#include "b_internal.h"
void a_f(void) {}'
	obj a_two '#include "a_internal.h"
void a_g(void) {}'
	obj state_redis_lua ' #  include "state_redis_internal.h"
void state_f(void) {}'
	run layers
	[ "$status" -eq 1 ]
	[ "$output" = "lib: 2 modules, 0 edges
foreign internal headers (a file, its module, includes a header, its module):
  $T/lib/a.c (a) includes b_internal.h (b)
  $T/lib/c.h (c) includes a_internal.h (a)
lib: no cycle, 2 foreign internal includes" ]
}

@test "--edges lists every edge with all its symbols, a cycle's marked" {
	obj a 'void b_g(void), b_h(void), c_k(void); void a_f(void) { b_h(); b_g(); c_k(); }'
	obj b 'void a_f(void); void b_g(void) { a_f(); } void b_h(void) {}'
	obj c 'void c_k(void) {}'
	run layers --edges
	[ "$status" -eq 1 ]
	[ "$output" = "lib: 3 modules, 3 edges
edges (a module, the module whose symbols it uses: the symbols):
  a -> b [cycle 1]: b_g b_h
  a -> c: c_k
  b -> a [cycle 1]: a_f
cycle 1 of 1: a, b (2 modules)
  a -> b (b_g, 1 more)
  b -> a (a_f)
lib: 1 cycle, no foreign internal header" ]
}

@test "--dot writes the module graph with a cycle's edges in red" {
	obj a 'void b_g(void), c_k(void); void a_f(void) { b_g(); c_k(); }'
	obj b 'void a_f(void); void b_g(void) { a_f(); }'
	obj c 'void c_k(void) {}'
	run layers --dot "$T/layers.dot"
	[ "$status" -eq 1 ]
	[ "$(cat "$T/layers.dot")" = 'digraph layers {
  node [shape=box, fontname="monospace"];
  subgraph "cluster_lib" {
    label="lib";
    "lib/a" [label="a"];
    "lib/b" [label="b"];
    "lib/c" [label="c"];
    "lib/a" -> "lib/b" [label="1", color=red, fontcolor=red];
    "lib/a" -> "lib/c" [label="1"];
    "lib/b" -> "lib/a" [label="1", color=red, fontcolor=red];
  }
}' ]
}

@test "a second set is a graph of its own: its symbols never resolve the first's" {
	obj a 'void b_g(void); void a_f(void) { b_g(); }'
	obj b 'void b_g(void) {}'
	obj x 'void a_f(void), y_g(void); void x_f(void) { a_f(); y_g(); }' other
	obj y 'void x_f(void); void y_g(void) { x_f(); }' other
	run layers lib other
	[ "$status" -eq 1 ]
	[ "$output" = "lib: 2 modules, 1 edge
lib: no cycle, no foreign internal header
other: 2 modules, 2 edges
cycle 1 of 1: x, y (2 modules)
  x -> y (y_g)
  y -> x (x_f)
other: 1 cycle, no foreign internal header" ]
}

@test "an object whose source is gone is left out, with a warning" {
	obj a 'void b_g(void); void a_f(void) { b_g(); }'
	obj b 'void a_f(void); void b_g(void) { a_f(); }'
	rm "$T/lib/b.c"
	run --separate-stderr layers
	[ "$status" -eq 0 ]
	[ "$output" = "lib: 1 module, 0 edges
lib: no cycle, no foreign internal header" ]
	[ "$stderr" = "layers.sh: $T/build/lib/b.o has no source in $T/lib/, left out" ]
}

@test "a set without objects is an error, status 2" {
	run --separate-stderr layers
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "layers.sh: no objects in $T/build/lib/ (make first)" ]
}

@test "the real build's lib/ gives a module count and the summary line" {
	cd "$BATS_TEST_DIRNAME/../.."
	run --separate-stderr scripts/layers.sh "$BUILD"
	echo "$output"
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
	[[ "${lines[0]}" =~ ^lib:\ [0-9]+\ modules,\ [0-9]+\ edges$ ]]
	[[ "${lines[-1]}" =~ ^lib:\ (no\ cycle|[0-9]+\ cycles?),\ (no\ foreign\ internal\ header|[0-9]+\ foreign\ internal\ includes?)$ ]]
	# The summary says 0 exactly when nothing was found.
	if [ "$status" -eq 0 ]; then
		[ "${lines[-1]}" = "lib: no cycle, no foreign internal header" ]
	else
		[ "${lines[-1]}" != "lib: no cycle, no foreign internal header" ]
	fi
}

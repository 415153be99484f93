/* deepfp - nofp's "deep" stack (main;dive x 101;work, each dive frame over
 * 1 KiB: deeper than lp-record's largest copy, 64 KiB) built with frame
 * pointers (the Makefile's default flags: no cflags line here), so
 * --call-graph auto must join the copy's DWARF frames to the frame-pointer
 * chain past it.  argv[1]: seconds. */
#define DEPTH 100
#include "nofp.c"

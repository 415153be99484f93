/* cflags: -fcf-protection=none */
/* plainloop - cetloop.c without -fcf-protection: tick() opens with push %rbp,
 * the cost of a uprobe on an emulated first instruction, for bench/trace.sh. */
#include "cetloop.c"

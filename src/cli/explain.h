/* explain.h — the topics of `fabricsim explain` that live in their own
 * files (cmd-explain.c dispatches).  Each takes argv with argv[0] = the
 * topic's name and returns the exit status (0, 1 runtime, 2 input). */
#pragma once

/* explain topo TOPO [GPU GPU]: explain-topo.c */
int fs_explain_topo(int argc, char **argv);
/* explain overlap TOPO WORKLOAD [OVERRIDE…]: explain-overlap.c */
int fs_explain_overlap(int argc, char **argv);

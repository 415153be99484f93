/* tree.h - call trees as profiles store them: each node's parent (its
 * index + 1, 0 for a root), from which its depth and its path from the
 * root, a parent link that loops found and named.  Shared by the readers
 * whose files are such trees (v8nodes.c, gecko.c, nflx.c). */
#ifndef LP_FOREIGN_TREE_H
#define LP_FOREIGN_TREE_H

#include <stddef.h>

/* Every node's depth into depth[0..n): the nodes from its root to it, both
 * counted (a root's is 1).  SIZE_MAX, or the index of a node that is its
 * own ancestor (depth is then not all filled in).  O(n): each node is
 * walked up once. */
size_t lp_tree__depths(const size_t *parent, size_t n, size_t *depth);

/* Node i's path into path[0..depth[i]): its root first, i last. */
void lp_tree__path(const size_t *parent, const size_t *depth, size_t i, size_t *path);

#endif

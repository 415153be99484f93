/* tree.c - depths and paths of call trees given as parent links (tree.h). */
#include "stream/foreign/tree.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t lp_tree__depths(const size_t *parent, size_t n, size_t *depth)
{
	const size_t walking = SIZE_MAX;	/* on the walk under way */
	size_t *path = lp_reallocarray(NULL, n ? n : 1, sizeof(*path)), looped = SIZE_MAX;
	memset(depth, 0, n * sizeof(*depth));
	for (size_t i = 0; i < n && looped == SIZE_MAX; i++) {
		size_t len = 0, at = i + 1, base;
		while (at && !depth[at - 1]) {
			depth[at - 1] = walking;
			path[len++] = at - 1;
			at = parent[at - 1];
		}
		if (at && depth[at - 1] == walking) {
			looped = at - 1;
			break;
		}
		base = at ? depth[at - 1] : 0;
		while (len)
			depth[path[--len]] = ++base;
	}
	free(path);
	return looped;
}

void lp_tree__path(const size_t *parent, const size_t *depth, size_t i, size_t *path)
{
	size_t k = depth[i];
	for (size_t at = i + 1; at && k; at = parent[at - 1])
		path[--k] = at - 1;
}

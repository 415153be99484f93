/* page.c - lp-serve's page (page.h): the file as built, made a C string at
 * build time (Makefile: serve-html.h). */
#include "serve/page.h"
#include "serve-html.h"	/* lp_serve_html[]: lib/serve/page/ */

const char *lp_serve_page(size_t *len)
{
	*len = sizeof(lp_serve_html) - 1;
	return lp_serve_html;
}

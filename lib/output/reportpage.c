/* reportpage.c - the page of lp-report (reportpage.h): the template, made
 * a C string at build time (Makefile: report-html.h), split at its one
 * marker, the data between. */
#include <string.h>

#include "output/reportpage.h"
#include "report-html.h"	/* lp_report_html[]: lib/output/report.html */

#define MARKER "/*LP-REPORT-DATA*/null"

int lp_report_page__write(FILE *out, const char *json, size_t len)
{
	const char *at = strstr(lp_report_html, MARKER);

	/* The template is checked at build time to hold the marker once. */
	if (!at)
		return -1;
	fwrite(lp_report_html, 1, (size_t)(at - lp_report_html), out);
	/* Every '<' as \u003c (JSON puts one only in a string): the data
	 * holds no "</script" nor "<!--" to end or upset the script
	 * element the page keeps it in. */
	for (size_t i = 0; i < len;) {
		const char *lt = memchr(json + i, '<', len - i);
		size_t run = lt ? (size_t)(lt - json) - i : len - i;

		fwrite(json + i, 1, run, out);
		i += run;
		if (i < len) {
			fputs("\\u003c", out);
			i++;
		}
	}
	fputs(at + strlen(MARKER), out);
	return ferror(out) ? -1 : 0;
}

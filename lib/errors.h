/* errors.h: the library's error codes and their texts. A call returns 0 or
 * one of these (or a negative errno); crawl_strerror says it in words. It
 * needs no other header of the library's, so that the leaves (URLs, HTML,
 * robots.txt, WARC) report errors without knowing the core. */
#ifndef CRAWL_ERRORS_H
#define CRAWL_ERRORS_H

enum {
    CRAWL_OK      = 0,
    CRAWL_ENOMEM  = -1000,  /* out of memory */
    CRAWL_EINPUT,           /* a URL list could not be read */
    CRAWL_ECURL,            /* libcurl could not be initialised */
    CRAWL_EMODE,            /* no such model */
    CRAWL_ETHREAD,          /* no thread could be started */
    CRAWL_EAGAIN,           /* nothing queued now, but jobs in flight may add some */
    CRAWL_EOUTPUT,          /* the output could not be written */
    CRAWL_ESTATE,           /* the --state store cannot be used for this crawl */
    CRAWL_EFRONTIER,        /* the --frontier server cannot be reached */
    CRAWL_ESTORE,           /* the --state file or the --frontier store lost
                             * this crawl's data or holds another's */
};

/* Returns a static text for a code from this header or a negative errno. */
const char *crawl_strerror(int err);

#endif

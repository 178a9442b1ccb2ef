/* errors.c: the texts of the library's error codes (errors.h). */
#include <string.h>

#include "errors.h"

const char *crawl_strerror(int err)
{
    switch (err) {
    case CRAWL_OK:      return "success";
    case CRAWL_ENOMEM:  return "out of memory";
    case CRAWL_EINPUT:  return "cannot read the URL list";
    case CRAWL_ECURL:   return "libcurl could not be initialised";
    case CRAWL_EMODE:   return "no such mode";
    case CRAWL_ETHREAD: return "no thread could be started";
    case CRAWL_EAGAIN:  return "no job queued yet";
    case CRAWL_EOUTPUT: return "the output could not be written";
    case CRAWL_ESTATE:  return "the state file cannot be used for this crawl";
    case CRAWL_EFRONTIER: return "the --frontier server cannot be reached";
    case CRAWL_ESTORE:  return "the store lost or does not hold this crawl's data";
    }
    if (err < 0 && err > -4096)
        return strerror(-err);
    return "unknown error";
}

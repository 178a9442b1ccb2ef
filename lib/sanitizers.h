/* sanitizers.h: the one place that tells whether this build runs under a
 * sanitizer. gcc defines __SANITIZE_*__, clang answers __has_feature; gcc
 * 12 has no __has_feature, hence the nesting. Defines CRAWL_ASAN and
 * CRAWL_TSAN as 1 or 0. */
#ifndef CRAWL_SANITIZERS_H
#define CRAWL_SANITIZERS_H

#if defined(__SANITIZE_ADDRESS__)
#define CRAWL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CRAWL_ASAN 1
#endif
#endif
#ifndef CRAWL_ASAN
#define CRAWL_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define CRAWL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CRAWL_TSAN 1
#endif
#endif
#ifndef CRAWL_TSAN
#define CRAWL_TSAN 0
#endif

#endif

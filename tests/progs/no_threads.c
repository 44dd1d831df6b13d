/* Preloaded before the library in a test: pthread_create always fails with EAGAIN, as it
 * does when a process reaches its thread or address-space limit (issue 8, pattern 8). */
#include <errno.h>
#include <pthread.h>

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    (void)t, (void)attr, (void)fn, (void)arg;
    return EAGAIN;
}

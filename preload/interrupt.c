/* preload/interrupt.c: sigaction and signal, with a counting trampoline in
 * front of the application's handlers (preload/interrupt.h). */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "preload/libc.h"
#include "preload/interrupt.h"
#include "preload/stack.h"

#define PL_NSIG 65

static struct sigaction pl_app[PL_NSIG]; /* the application's, as given */
static volatile sig_atomic_t pl_wrapped[PL_NSIG];
static unsigned long pl_any, pl_norestart;

struct pl_sigmark pl_sig_mark(void)
{
	return (struct pl_sigmark){ .any = __atomic_load_n(&pl_any, __ATOMIC_ACQUIRE),
				    .norestart = __atomic_load_n(&pl_norestart,
								 __ATOMIC_ACQUIRE) };
}

bool pl_sig_since(const struct pl_sigmark *m, bool restartable)
{
	struct pl_sigmark now = pl_sig_mark();

	return restartable ? now.norestart != m->norestart : now.any != m->any;
}

static void pl_trampoline(int sig, siginfo_t *info, void *uctx)
{
	const struct sigaction *a = &pl_app[sig];
	int err = errno;

	__atomic_add_fetch(&pl_any, 1, __ATOMIC_RELEASE);
	if (!(a->sa_flags & SA_RESTART))
		__atomic_add_fetch(&pl_norestart, 1, __ATOMIC_RELEASE);
	errno = err;
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, info, uctx);
	else if (a->sa_handler != SIG_IGN && a->sa_handler != SIG_DFL)
		a->sa_handler(sig);
}

static bool pl_is_function(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) ||
	       (a->sa_handler != SIG_IGN && a->sa_handler != SIG_DFL);
}

static int pl_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static int (*real)(int, const struct sigaction *, struct sigaction *);

	if (real == NULL)
		real = pl_libc()->sigaction;
	return real(sig, act, old);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction mine, prev = pl_app[sig < 0 || sig >= PL_NSIG ? 0 : sig];
	bool was = sig > 0 && sig < PL_NSIG && pl_wrapped[sig];
	int rc;

	if (pl_inside() || sig <= 0 || sig >= PL_NSIG || act == NULL) {
		rc = pl_real_sigaction(sig, act, old);
		if (rc == 0 && old != NULL && was && act == NULL)
			*old = prev;
		return rc;
	}
	if (!pl_is_function(act)) {
		rc = pl_real_sigaction(sig, act, old);
		if (rc == 0)
			pl_wrapped[sig] = 0;
	} else {
		pl_app[sig] = *act;
		mine = *act;
		mine.sa_flags |= SA_SIGINFO;
		mine.sa_sigaction = pl_trampoline;
		rc = pl_real_sigaction(sig, &mine, old);
		if (rc == 0)
			pl_wrapped[sig] = 1;
		else
			pl_app[sig] = prev;
	}
	if (rc == 0 && old != NULL && was)
		*old = prev;
	return rc;
}

/* glibc's signal: BSD semantics (SA_RESTART, the handler stays). */
sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction
					   : old.sa_handler;
}

// What the static libstdc++ of Debian 12 (compiled against glibc 2.36) takes from glibc and an
// older glibc lacks. Linked only into the release binary, which links against Debian 11's glibc
// (cmake/GpuprovPortable.cmake); a definition here binds every reference in the binary at link
// time, so the symbol needs no version from the libc it runs on. scripts/check-portable.sh
// fails the build if anything newer than glibc 2.28 is still asked for.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <pthread.h>
#include <sys/random.h>

extern "C" {

// glibc 2.32: nonzero while the process has one thread, so libstdc++ may skip atomic
// instructions for shared_ptr counts and the like. Zero says "maybe threaded": always atomic,
// which is correct everywhere (only a little slower), as it was before glibc had this flag.
char __libc_single_threaded = 0; // NOLINT: glibc's name

// glibc 2.36, used by std::random_device: 32 random bits from the kernel (getrandom, glibc 2.25).
std::uint32_t arc4random() {
    std::uint32_t value = 0;
    auto* p = reinterpret_cast<unsigned char*>(&value);
    std::size_t got = 0;
    while (got < sizeof value) {
        const auto n = ::getrandom(p + got, sizeof value - got, 0);
        if (n > 0) {
            got += static_cast<std::size_t>(n);
        } else if (n < 0 && errno != EINTR) {
            break; // no getrandom (kernel < 3.17): not a supported kernel for any target distro
        }
    }
    return value;
}

// glibc 2.30, used by std::condition_variable's waits on the steady clock: wait until `abstime`
// on `clock`, as pthread_cond_timedwait does on CLOCK_REALTIME (the condition variables
// libstdc++ makes use that clock), by converting the time left into a realtime deadline.
int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                           const struct timespec* abstime) {
    if (clock == CLOCK_REALTIME) {
        return ::pthread_cond_timedwait(cond, mutex, abstime);
    }
    timespec now{};
    timespec real{};
    if (::clock_gettime(clock, &now) != 0 || ::clock_gettime(CLOCK_REALTIME, &real) != 0) {
        return EINVAL;
    }
    long long sec = static_cast<long long>(abstime->tv_sec) - now.tv_sec + real.tv_sec;
    long nsec = abstime->tv_nsec - now.tv_nsec + real.tv_nsec;
    while (nsec < 0) {
        nsec += 1000000000L;
        --sec;
    }
    while (nsec >= 1000000000L) {
        nsec -= 1000000000L;
        ++sec;
    }
    const timespec deadline{static_cast<time_t>(sec), nsec};
    return ::pthread_cond_timedwait(cond, mutex, &deadline);
}

} // extern "C"

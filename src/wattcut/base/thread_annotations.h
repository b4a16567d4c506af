// Clang's thread-safety analysis (-Wthread-safety): which mutex guards which member, and which
// functions need it held, stated in the code and checked by the compiler. Under GCC the
// annotations are empty; scripts/check_thread_safety.py compiles the annotated modules with clang
// (the build step `thread_safety_check`, tests/CMakeLists.txt), so a function that touches guarded
// state without its lock, or calls one that REQUIRES a lock it does not hold, fails the build and
// so the test command.
#pragma once

#if defined(__clang__)
#define WATTCUT_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define WATTCUT_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(name) WATTCUT_THREAD_ANNOTATION(capability(name))
#define SCOPED_CAPABILITY WATTCUT_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(mu) WATTCUT_THREAD_ANNOTATION(guarded_by(mu))
#define PT_GUARDED_BY(mu) WATTCUT_THREAD_ANNOTATION(pt_guarded_by(mu))
#define ACQUIRED_BEFORE(...) WATTCUT_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) WATTCUT_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) WATTCUT_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) WATTCUT_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) WATTCUT_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) WATTCUT_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) WATTCUT_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) WATTCUT_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) WATTCUT_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) WATTCUT_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) WATTCUT_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) WATTCUT_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) WATTCUT_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS WATTCUT_THREAD_ANNOTATION(no_thread_safety_analysis)

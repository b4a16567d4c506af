#include "wattcut/base/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace wattcut::huge_pages {
namespace {

// The next multiple of a huge page (a size, or an address).
uintptr_t RoundUp(uintptr_t n) { return (n + kBytes - 1) / kBytes * kBytes; }

}  // namespace

void* Map(size_t bytes) {
  const size_t size = RoundUp(bytes);
  // One huge page more than needed, then the unaligned head and tail given back: the kernel backs
  // only 2 MiB-aligned ranges with a huge page.
  void* raw = mmap(nullptr, size + kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = RoundUp(start);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + size + kBytes;
  if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, size, MADV_HUGEPAGE);  // advice only: without it the memory is ordinary pages
  return p;
}

void Unmap(void* p, size_t bytes) noexcept { munmap(p, RoundUp(bytes)); }

}  // namespace wattcut::huge_pages

// The timing harness's only kernel (thousand.cuda.timing): it keeps the GPU busy for
// `ns` nanoseconds, long enough for the host to queue the work it wants to time, so
// the start event after it fires when that work is already waiting: the events then
// time the GPU's work, not Python issuing it. It computes nothing to check.
extern "C" __global__ void hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

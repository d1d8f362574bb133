// B15's yardstick for the cost of a call: a kernel that does nothing, so a launch
// of it costs only the path that issues it. gelu_extension.cu includes this file and
// PyCUDA compiles it alone (thousand.cuda.kernel), so both paths launch this kernel.

// --8<-- [start:empty]
extern "C" __global__ void empty_kernel() {}
// --8<-- [end:empty]

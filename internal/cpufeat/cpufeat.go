// Package cpufeat reports the vector instruction sets that the processor and the operating
// system support, for the packages that carry assembly (softmaxjet, backward): one detection
// instead of a copy in each.
package cpufeat

// AVX is true when the processor has AVX and the operating system saves the YMM registers
// across context switches; AVX2 when AVX2 is there as well. Both are false off amd64.
var AVX, AVX2 = detect()

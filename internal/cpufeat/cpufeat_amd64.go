//go:build amd64

package cpufeat

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv0() (eax uint32)

func detect() (avx, avx2 bool) {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 1 {
		return false, false
	}
	_, _, ecx, _ := cpuid(1, 0)
	const osxsave, avxBit = 1 << 27, 1 << 28
	// XMM and YMM state enabled by the operating system (XCR0 bits 1 and 2).
	avx = ecx&osxsave != 0 && ecx&avxBit != 0 && xgetbv0()&6 == 6
	if !avx || maxID < 7 {
		return avx, false
	}
	_, ebx, _, _ := cpuid(7, 0)
	const avx2Bit = 1 << 5
	return true, ebx&avx2Bit != 0
}

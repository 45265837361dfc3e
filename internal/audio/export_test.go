package audio

// TransformOnDiskAbove makes ResampleVoiceMono transform channels longer than n samples on
// disk, for a test of short tracks; the function it returns puts the length back.
func TransformOnDiskAbove(n int) (restore func()) {
	old := diskAbove
	diskAbove = n
	return func() { diskAbove = old }
}

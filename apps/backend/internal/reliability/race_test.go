//go:build race

package reliability

// raceEnabled scales the CI scenarios down under the race detector, which
// slows the client side (this test process) about tenfold.
const raceEnabled = true

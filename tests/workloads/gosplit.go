// gosplit - known truth for readers of Go's pprof: a() runs one round of
// work for every three b() runs, the rounds alike, so a() takes 25% of the
// CPU the two take.  It profiles itself with runtime/pprof at 1000 Hz into
// argv[1] until it has used argv[2] seconds of CPU (default 4), then prints
//	gosplit: a_rounds=R b_rounds=S
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
)

var sink uint64

//go:noinline
func spin(n int) {
	for i := 0; i < n; i++ {
		sink = sink*6364136223846793005 + 1442695040888963407
	}
}

//go:noinline
func a() { spin(20000) }

//go:noinline
func b() {
	spin(20000)
	spin(20000)
	spin(20000)
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gosplit PROFILE [CPU-SECONDS]")
		os.Exit(2)
	}
	budget := 4.0
	if len(os.Args) > 2 {
		budget, _ = strconv.ParseFloat(os.Args[2], 64)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.LockOSThread()
	runtime.SetCPUProfileRate(1000)
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var ar, br int
	start := cpuSeconds()
	for cpuSeconds()-start < budget {
		for i := 0; i < 20; i++ {
			a()
			b()
		}
		ar += 20
		br += 60
	}
	pprof.StopCPUProfile()
	f.Close()
	fmt.Fprintf(os.Stderr, "gosplit: a_rounds=%d b_rounds=%d\n", ar, br)
}

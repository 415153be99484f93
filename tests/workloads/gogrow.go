// gogrow - goroutines whose stacks grow under a traced function and that
// move between threads while in it.  N goroutines (argv[1], default 200),
// at most 8 at once, each calling handle(i) once: handle first calls big(i),
// whose 16 KiB frame does not fit the 8 KiB a goroutine starts with (its
// stack grows in big's prologue, and big starts over), then recurses
// through grow() deep enough to copy its stack again (100 frames of 1 KiB),
// sleeps so that it may resume on another thread, then calls leaf(i).
// Truth: N spans each of handle, big and leaf (big and leaf inside handle:
// depth 1), each handle at least 1 ms long; big(i) = i + 1, leaf(i) = 2i,
// handle(i) = 5050 + 2i.  It prints how many handle calls resumed on
// another thread and saw their stack moved (their frame's address
// changed), and the sum of handle's results.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

var migrated, moved int64

//go:noinline
func grow(n int) int {
	var pad [1024]byte
	pad[n%1024] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return grow(n-1) + int(pad[n%1024])
}

var bigSink int64

//go:noinline
func big(i int) int {
	var pad [16384]byte
	for k := range pad {
		pad[k] = byte(k + i)
	}
	s := 0
	for k := 0; k < len(pad); k += 1024 {
		s += int(pad[k])
	}
	atomic.AddInt64(&bigSink, int64(s))
	return i + 1
}

//go:noinline
func leaf(i int) int {
	return i * 2
}

//go:noinline
func handle(i int) int {
	var here int
	before := uintptr(unsafe.Pointer(&here))
	b := big(i)
	tid := syscall.Gettid()
	r := grow(100) + b - i - 1
	time.Sleep(time.Millisecond)
	runtime.Gosched()
	if syscall.Gettid() != tid {
		atomic.AddInt64(&migrated, 1)
	}
	if uintptr(unsafe.Pointer(&here)) != before {
		atomic.AddInt64(&moved, 1)
	}
	return r + leaf(i)
}

func main() {
	n := 200
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	var wg sync.WaitGroup
	var sum int64
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			atomic.AddInt64(&sum, int64(handle(i)))
			<-sem
		}(i)
	}
	wg.Wait()
	fmt.Printf("calls %d migrated %d moved %d sum %d\n", n, migrated, moved, sum)
}

// rustshop - a Rust program built as distributions build Rust (rustc -O: no
// frame pointers), by tests/names.bats itself: N calls of shop::Cart::checkout
// from shop::main, each spinning.
use std::env;

struct Cart { items: u64 }

impl Cart {
    #[inline(never)]
    fn checkout(&self, n: u64) -> u64 {
        let mut x = 0u64;
        for i in 0..n * 1000 {
            x = x.wrapping_add(unsafe { std::ptr::read_volatile(&(i * self.items)) });
        }
        x
    }
}

fn main() {
    let n: u64 = env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let c = Cart { items: 3 };
    let mut t = 0u64;
    for i in 0..n {
        t = t.wrapping_add(c.checkout(i % 50 + 1));
    }
    println!("{}", t & 1);
}

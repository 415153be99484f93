// rustshop - a Rust program built as distributions build Rust (rustc -O: no
// frame pointers), by tests/names.bats itself: N calls of the inherent
// method shop::Cart::checkout from shop::main, each spinning, and N / 10 of
// the trait method <shop::Cart as core::fmt::Display>::fmt.
use std::env;
use std::fmt;

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

impl fmt::Display for Cart {
    #[inline(never)]
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "cart of {}", self.items)
    }
}

fn main() {
    let n: u64 = env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let c = Cart { items: 3 };
    let mut t = 0u64;
    for i in 0..n {
        t = t.wrapping_add(c.checkout(i % 50 + 1));
        if i % 10 == 0 {
            t = t.wrapping_add(format!("{}", c).len() as u64);
        }
    }
    println!("{}", t & 1);
}

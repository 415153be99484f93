# pyshop.py - a Python shop loop of many small calls, whose slow orders are
# the ones that render an invoice, known by construction: for what tracing
# one Python function costs the rest of the interpreter (bench/pyshop.sh,
# tests/lp-trace-python.bats).  Each order is one Shop.checkout: its 70
# items priced through small methods, rules and a generator (about 15
# Python calls an item, ~90 us an order here), and one order in twelve
# (spread by a multiplicative hash, not every twelfth) also renders its
# invoice, about ten times the rest of an order: render_invoice is close
# to half of the loop's CPU time.  The program times render_invoice itself
# with time.thread_time and prints the orders it served, how many
# rendered, render_invoice's share of the loop's CPU time, and the orders
# a CPU second.
#
# usage: python3 pyshop.py CPU_SECONDS [THREADS]
#
# The loop runs until it has had CPU_SECONDS of CPU time.  With THREADS, it
# runs in that many threads started after the first order (each with its
# own shop and a CPU_SECONDS / THREADS budget of its own thread's time).
import sys
import time


class Item:
    def __init__(self, sku, qty):
        self.sku = sku
        self.qty = qty

    def unit_price(self):
        return 100 + self.sku % 37

    def discount(self, total):
        return total // 20 if self.qty > 3 else 0


class Rule:
    def __init__(self, k):
        self.k = k

    def applies(self, item):
        return (item.sku + self.k) % 5 == 0

    def adjust(self, amount):
        return amount - self.k


RULES = [Rule(k) for k in range(8)]


class Shop:
    def __init__(self):
        self.served = 0
        self.rendered = 0
        self.render_cpu = 0.0

    def price(self, item):
        total = item.unit_price() * item.qty
        for rule in RULES:
            if rule.applies(item):
                total = rule.adjust(total)
        return total - item.discount(total)

    def tax(self, amount):
        return amount * 7 // 100

    def lines(self, items):
        for item in items:
            yield self.price(item)

    def render_invoice(self, n, items):
        t = time.thread_time()
        out = []
        for rep in range(8):
            for item in items:
                out.append("%6d %-12s x%3d %10.2f" % (n, "sku-%d" % item.sku, item.qty,
                                                       self.price(item) / 100.0))
        text = "\n".join(out)
        self.render_cpu += time.thread_time() - t
        return len(text)

    def checkout(self, n, items, invoice):
        subtotal = sum(self.lines(items))
        total = subtotal + self.tax(subtotal)
        if invoice:
            self.render_invoice(n, items)
            self.rendered += 1
        self.served += 1
        return total


def order(n):
    return [Item((n * 31 + k * 7) % 1000, 1 + (n + k) % 6) for k in range(70)]


def serve(shop, budget, first):
    start = time.thread_time()
    n = first
    while time.thread_time() - start < budget:
        for _ in range(100):
            invoice = (n * 2654435761) % 2 ** 32 < 2 ** 32 // 12
            shop.checkout(n, order(n), invoice)
            n += 1
    shop.cpu = time.thread_time() - start


def main():
    budget = float(sys.argv[1])
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    shops = [Shop() for _ in range(max(threads, 1))]
    if threads:
        shops[0].checkout(0, order(0), False)
        import threading
        ts = [threading.Thread(target=serve, args=(s, budget / threads, 10 ** 7 * i))
              for i, s in enumerate(shops)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    else:
        serve(shops[0], budget, 0)
    served = sum(s.served for s in shops)
    cpu = sum(s.cpu for s in shops)
    print("orders=%d rendered=%d render_share=%.3f cpu_s=%.3f orders_per_cpu_s=%.0f" %
          (served, sum(s.rendered for s in shops), sum(s.render_cpu for s in shops) / cpu, cpu,
           served / cpu))


main()

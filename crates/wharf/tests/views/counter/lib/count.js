window.count = (n) => String(n);

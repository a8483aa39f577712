document.getElementById("count").textContent = window.count(1); // "</script>" stays inside

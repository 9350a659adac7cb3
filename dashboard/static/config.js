// The page's configuration: data the server writes into the page as JSON
// (pageConfig in page.go), never code and never an echarts option.
export const cfg = JSON.parse(document.getElementById('pulse-config').textContent);

// pollSeconds is the poll interval in seconds, to one decimal.
export const pollSeconds = Math.round(cfg.pollMillis / 100) / 10;

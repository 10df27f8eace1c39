-- wrk script: rotates the search needles of `crossbook-bench search` so the load is not one cached query.
-- wrk -t2 -c64 -d20s --latency -s crates/bench/wrk/search.lua http://127.0.0.1:PORT
local needles = { "bitcoin", "lakers", "fed", "rates", "celtics", "election", "above", "nov", "ethereum",
  "super%20bowl", "senate", "inflation", "xyzzyq", "temperature", "taylor", "champion", "recession", "arsenal",
  "gdp", "price" }
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/v1/search/markets?q=" .. needles[(i % #needles) + 1])
end

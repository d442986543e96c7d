module gorgonia.org/cu

go 1.24

require gonum.org/v1/gonum v0.11.0

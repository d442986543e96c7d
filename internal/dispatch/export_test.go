package dispatch

import "os"

func lookupEnv() (string, bool) { return os.LookupEnv(EnvVar) }

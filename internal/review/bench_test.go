package review_test

func cleanupBenchRepo() {}

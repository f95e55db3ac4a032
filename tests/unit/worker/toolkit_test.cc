#include "worker/toolkit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::worker::toolkit {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

// The toolkit's own mapping.to_cmd_args on these hyperparameters (spec/training-toolkit.md §2,
// run with the toolkit's code) gave exactly these arguments.
TEST(ToCmdArgsTest, MatchesTheToolkitOnItsWorkedExample) {
  const std::map<std::string, std::string> hps = {{"B", "1.0"},
                                                  {"cfg", "{\"b\": 2, \"a\": [1, \"x\"]}"},
                                                  {"epochs", "10"},
                                                  {"flag", "true"},
                                                  {"lr", "0.00001"},
                                                  {"lst", "[1, 2]"},
                                                  {"n", "null"},
                                                  {"opt2", "adam"},
                                                  {"optimizer", "\"adam\""},
                                                  {"x", "\"a b\""},
                                                  {"sagemaker_program", "\"train.py\""},
                                                  {"_tuning_objective_metric", "val:loss"}};
  EXPECT_THAT(ToCmdArgs(UserHyperparameters(hps)),
              ElementsAre("-B", "1.0", "--cfg", "a=[1, 'x'],b=2", "--epochs", "10", "--flag",
                          "True", "--lr", "1e-05", "--lst", "[1, 2]", "-n", "", "--opt2", "adam",
                          "--optimizer", "adam", "-x", "a b"));
}

TEST(PythonStrTest, WritesFloatsAsPythonsRepr) {
  EXPECT_EQ(PythonStr(json(0.1)), "0.1");
  EXPECT_EQ(PythonStr(json(100.0)), "100.0");
  EXPECT_EQ(PythonStr(json(1e-05)), "1e-05");
  EXPECT_EQ(PythonStr(json(0.0001)), "0.0001");
  EXPECT_EQ(PythonStr(json(1e16)), "1e+16");
  EXPECT_EQ(PythonStr(json(123456789.5)), "123456789.5");
  EXPECT_EQ(PythonStr(json(-2.5e-07)), "-2.5e-07");
  EXPECT_EQ(PythonStr(json::parse("[\"it's\", null, false]")), "[\"it's\", None, False]");
}

TEST(ErrorMessageFromOutputTest, StartsAtTheFirstLineNamingAnExceptionAsTheToolkitDoes) {
  const std::string stderr_text =
      "epoch 1\n"
      "Traceback (most recent call last):\n"
      "  File \"/opt/ml/code/train.py\", line 9, in <module>\n"
      "    f()\n"
      "  File \"/opt/ml/code/train.py\", line 6, in f\n"
      "    raise ValueError(\"boom: bad value\")\n"
      "ValueError: boom: bad value\n";
  // The worked example of spec/training-toolkit.md §5 (the toolkit's code run on this script).
  EXPECT_EQ(ErrorMessageFromOutput(stderr_text),
            "raise ValueError(\"boom: bad value\")\n ValueError: boom: bad value");
  EXPECT_EQ(ErrorMessageFromOutput("no error here\n"), "");
}

TEST(ProcessErrorMessageTest, IsTheToolkitsCalledProcessErrorText) {
  EXPECT_EQ(ProcessErrorMessage("ExecuteUserScriptError", 1, "ValueError: x",
                                {"/usr/bin/python3", "train.py", "--a", "1"}),
            "ExecuteUserScriptError:\nExitCode 1\nErrorMessage \"ValueError: x\"\n"
            "Command \"/usr/bin/python3 train.py --a 1\"");
}

}  // namespace
}  // namespace amt::worker::toolkit

"""TFP104 and an update repeated once per environment step, across modules (issue 22, ninth stop).

hzy46/Deep-Learning-21-Examples chapter 20: the agent base class (agent.py) steps the environment and
calls ``self.observe(...)`` on each step; the DQN subclass (deep_q.py) overrides ``observe`` to run the
update on a replay sample. The simulator sets the pace: silent. The same update called from a loop of
its own over the replay memory (Hvass-Labs' ``optimize``) is reported.

Each test runs the real CLI on a project written to disk."""

from __future__ import annotations

from tests.conftest import project_findings as _findings, write_project as _project

_AGENT = (
    "import tensorflow as tf\n\nclass Agent:\n    def __init__(self, env, sess):\n        self.env = env\n        self.sess = sess\n\n"
    "    def train(self, t_max):\n        observation = self.env.reset()\n        for t in range(t_max):\n"
    "            action = self.predict(observation)\n"
    "            observation, reward, terminal, info = self.env.step(action)\n"
    "            self.observe(observation, reward, action, terminal)\n"
)
_DEEP_Q = (
    "import numpy as np\nimport tensorflow as tf\nfrom agent import Agent\n\n"
    "class DeepQ(Agent):\n    def observe(self, observation, reward, action, terminal):\n"
    "        self.experience.add(observation, reward, action, terminal)\n        return self.q_learning_minibatch()\n\n"
    "    def q_learning_minibatch(self):\n        s_t, action, reward, s_t_plus_1 = self.experience.sample()\n"
    "        _, loss = self.sess.run([self.optim, self.loss], {self.actions: action, self.inputs: s_t})\n"
    "        return loss\n"
)
# The update loop of its own: the replay memory is full before it runs, and no environment is stepped in it.
_OWN_LOOP = (
    "import numpy as np\nimport tensorflow as tf\nfrom agent import Agent\n\n"
    "class DeepQ(Agent):\n    def observe(self, observation, reward, action, terminal):\n"
    "        self.experience.add(observation, reward, action, terminal)\n\n"
    "    def optimize(self, iterations):\n        for i in range(iterations):\n"
    "            s_t, action, reward, s_t_plus_1 = self.experience.sample()\n"
    "            self.sess.run([self.optim, self.loss], {self.actions: action, self.inputs: s_t})\n"
)




def test_an_update_run_on_each_environment_step_of_a_base_class_loop_is_silent(tmp_path):
    root = _project(tmp_path, {"agent.py": _AGENT, "deep_q.py": _DEEP_Q})
    assert _findings(root, "TFP104") == set()


def test_an_update_loop_of_its_own_over_the_replay_memory_is_reported(tmp_path):
    root = _project(tmp_path, {"agent.py": _AGENT, "deep_q.py": _OWN_LOOP})
    assert _findings(root, "TFP104") == {("deep_q.py", 12)}

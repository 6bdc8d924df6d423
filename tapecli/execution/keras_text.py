"""``tf.keras.preprocessing.text`` on CPython: Keras's legacy ``Tokenizer`` and ``text_to_word_sequence``, which
TensorFlow 2.21's tf.keras keeps from Keras 1 (``keras/src/legacy/preprocessing/text.py``). They compute on Python
strings, lists and dicts, and a matrix of NumPy's, as Keras's do: the program holds Python's values, and the same
words get the same indices (the most frequent first, ties in the order first seen)."""
from __future__ import annotations

import collections

import numpy as np

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text, filters=FILTERS, lower=True, split=" "):
    """The words of a text: lowered, each filtered character a split, the empty words dropped."""
    if lower:
        input_text = input_text.lower()
    words = input_text.translate(str.maketrans({c: split for c in filters})).split(split)
    return [w for w in words if w]


class Tokenizer:
    """Keras's legacy Tokenizer: a vocabulary fitted on texts (or character lists), and texts turned into index
    sequences or count matrices with it."""

    def __init__(self, num_words=None, filters=FILTERS, lower=True, split=" ", char_level=False, oov_token=None,
                 analyzer=None, **kwargs):
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {str(kwargs)}")
        self.word_counts = collections.OrderedDict()
        self.word_docs = collections.defaultdict(int)
        self.filters, self.split, self.lower = filters, split, lower
        self.num_words, self.document_count = num_words, document_count
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.index_docs = collections.defaultdict(int)
        self.word_index, self.index_word = {}, {}

    def _words(self, text):
        """A text's words as the tokenizer splits it (a list of words, or a character-level text: its items)."""
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return text
        if self.analyzer is not None:
            return self.analyzer(text)
        return text_to_word_sequence(text, filters=self.filters, lower=self.lower, split=self.split)

    def fit_on_texts(self, texts):
        for text in texts:
            self.document_count += 1
            words = self._words(text)
            for w in words:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(words):
                self.word_docs[w] += 1
        by_count = sorted(self.word_counts.items(), key=lambda item: item[1], reverse=True)     # (stable: ties kept)
        vocabulary = ([] if self.oov_token is None else [self.oov_token]) + [w for w, _ in by_count]
        self.word_index = dict(zip(vocabulary, range(1, len(vocabulary) + 1)))
        self.index_word = {i: w for w, i in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences):
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def texts_to_sequences(self, texts):
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        """Each text's indices: a word past ``num_words`` or unknown is the OOV index where there is one, else
        dropped."""
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            out = []
            for w in self._words(text):
                i = self.word_index.get(w)
                if i is None:
                    if self.oov_token is not None:
                        out.append(oov)
                elif not (self.num_words and i >= self.num_words):
                    out.append(i)
                elif oov is not None:
                    out.append(oov)
            yield out

    def sequences_to_texts(self, sequences):
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        oov = self.word_index.get(self.oov_token)
        for seq in sequences:
            out = []
            for i in seq:
                word = self.index_word.get(i)
                if word is None:
                    if self.oov_token is not None:
                        out.append(self.index_word[oov])
                elif not (self.num_words and i >= self.num_words):
                    out.append(word)
                elif oov is not None:
                    out.append(self.index_word[oov])
            yield " ".join(out)

    def texts_to_matrix(self, texts, mode="binary"):
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """One row per sequence over the vocabulary (``num_words`` columns): its indices' presence, counts,
        frequencies or tf-idf weights, float64 as Keras's."""
        if self.num_words:
            columns = self.num_words
        elif self.word_index:
            columns = len(self.word_index) + 1
        else:
            raise ValueError("Specify a dimension (`num_words` argument), or fit on some text data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        x = np.zeros((len(sequences), columns))
        for row, seq in enumerate(sequences):
            counts = collections.Counter(j for j in seq if j < columns)
            for j, c in counts.items():
                if mode == "count":
                    x[row][j] = c
                elif mode == "freq":
                    x[row][j] = c / len(seq)
                elif mode == "binary":
                    x[row][j] = 1
                elif mode == "tfidf":
                    x[row][j] = (1 + np.log(c)) * np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                else:
                    raise ValueError("Unknown vectorization mode:", mode)
        return x


# (printed as Keras's: <class 'keras.src.legacy.preprocessing.text.Tokenizer'>)
Tokenizer.__module__ = text_to_word_sequence.__module__ = "keras.src.legacy.preprocessing.text"
